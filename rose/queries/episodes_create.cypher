UNWIND $rows AS r
CREATE (e:Episode {id: r.id, scope: r.scope, prompt: r.prompt, outcome: r.outcome, served_ids: r.served_ids, used_ids: r.used_ids, accepted_summary: r.accepted_summary, session: r.session, turn: r.turn, citation_ids: r.citation_ids, load_bearing: r.load_bearing, expanded: r.expanded, rescued: r.rescued, time: r.time, path: r.path});
