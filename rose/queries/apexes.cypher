// Servable lessons with no servable parent: the most compressed things in the store.
// $scope = '' for both scopes.
MATCH (l:Lesson)
WHERE l.status IN ['active', 'disputed'] AND ($scope = '' OR l.scope = $scope)
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(l) WHERE p.status IN ['active', 'disputed'] }
RETURN l.id AS id, l.scope AS scope, l.family AS family, l.title AS title, l.gist AS gist, l.level AS level, l.status AS status, l.tokens AS tokens, l.gist_tokens AS gist_tokens, l.successes AS successes, l.failures AS failures, l.conflict AS conflict, l.created AS created
ORDER BY l.level DESC, l.id;
