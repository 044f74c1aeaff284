"""What the fleet's claims mean, pure over claim sets: conflicts, warnings, prune risks and the lifecycle
of every object whose emitters change."""
