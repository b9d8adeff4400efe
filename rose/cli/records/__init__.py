"""Commands over what happened: episodes, graph queries, recall traces, reports and
digests."""
