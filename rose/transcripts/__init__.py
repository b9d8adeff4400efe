"""The hosts' transcripts read into one neutral form, the digest of a unit of work, and the
copy tripwire for content from outside the repository."""
