"""The render pipeline every command shares: where an app's chart lives, the settings of its render, and
helm then the ownership rules."""
