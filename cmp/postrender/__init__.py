"""Post-rendering with kustomize's meanings: patches, images, labels and annotations over helm's output.

What a kustomization (or a Flux HelmRelease's `postRenderers[].kustomize`) says of helm's output, said in
chartshare.yaml and carried out here, in kustomize's order, before the ownership rules see the objects.
One module per field; `apply.py` runs them. Pure: the file's fields in (fields.py), the render's
resources edited, what happened out.
"""
