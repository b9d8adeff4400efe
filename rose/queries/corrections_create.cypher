// The checks' corrections of attribution, one row each (`rose.graph._corrections`).
UNWIND $rows AS r
CREATE (:Correction {id: r.id, episode: r.episode, lesson: r.lesson, used: r.used, time: r.time, path: r.path});
