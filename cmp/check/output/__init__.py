"""What check writes: the report formats, a shard's claims document, and the merge of shards' documents."""
