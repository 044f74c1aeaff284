"""What a change does to every shared object before it merges (`check --base`), decided by a model of Argo CD.

entries.py lists the objects a change moves; cases.py reads what the model needs of each from both
revisions' claims; model.py is the model (the object's state, the events, one transition); search.py
explores every order of the events; fixes.py finds the smallest change the model accepts; reasons.py
puts it in words.
"""

from cmp.check.analysis.lifecycle.cases import LastSpecs
from cmp.check.analysis.lifecycle.entries import EVENTS, Entry, changed_ids, lifecycle, unjudged, unsafe_apps
from cmp.check.analysis.lifecycle.model import Step

__all__ = ["EVENTS", "Entry", "LastSpecs", "Step", "changed_ids", "lifecycle", "unjudged", "unsafe_apps"]
