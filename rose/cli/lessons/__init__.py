"""Commands over the lessons themselves: add, show, edit, search, view, review, compaction,
merges, conflicts and selection rules."""
