"""What a run is asked to do: the parameter table, generate's options, the resolved configuration and
the paths it may touch."""
