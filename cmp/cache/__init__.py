"""The render cache: `key` names a render by everything its output depends on, `store` keeps outputs by key."""
