"""The fleet as Argo CD would create it: Applications read from files, those ApplicationSets generate, the
repositories their sources name, and the Applications an app renders (App of Apps)."""
