"""chartshare.yaml and what it decides: rules, scope, decisions, and carrying them out on a render."""
