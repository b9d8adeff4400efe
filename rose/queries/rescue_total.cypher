// Rescues recorded in episodes: failures turned by restored detail, and successful uses a
// lesson's patch was served on.
MATCH (e:Episode)
RETURN coalesce(sum(size(e.rescued)), 0) + coalesce(sum(size(e.patch_rescued)), 0) AS n;
