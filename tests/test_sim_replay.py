"""Replay compares a candidate's probe with the probe of the lesson it would replace, so a
lesson can pass on an episode that also needed other lessons (DESIGN.md, "Replay").

Locks in, through the Judge and the simulated backend: every uncompressed lesson passes
replay (probe, then judge with the reference probe) on every episode it was served in
that succeeded, including episodes that needed several lessons or the user's steering;
judged against the accepted outcome alone (no reference), a lesson fails on episodes
that needed more than it holds, which is why the reference exists; a compression that
dropped a fact the accepted outcome states, and the original's probe reached, fails.
"""

from __future__ import annotations

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples

SEEDS = range(3)


def _replay(judge: Judge, prompt: str, accepted: str, candidate, original, *, reference=True):
    probe = judge.ask("replay_probe", {"prompt": prompt, "lesson": candidate}).approach
    ctx = {"prompt": prompt, "accepted": accepted, "approach": probe}
    if reference:
        ctx["reference"] = judge.ask(
            "replay_probe", {"prompt": prompt, "lesson": original}
        ).approach
    return judge.ask("replay_judge", ctx)


def test_every_uncompressed_lesson_passes_replay_on_all_its_episodes():
    replays = multi = without_reference_failed = steered = 0
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world, seed=ws), cache_path=None, events_path=None)
        for episode in examples.episodes(world):
            prompt = episode.task.prompt
            assert episode.accepted
            for lesson in episode.served:
                verdict = _replay(judge, prompt, episode.accepted, lesson, lesson)
                assert verdict.verdict == "pass", (episode.task, lesson["id"], verdict.reason)
                replays += 1
                if len(episode.served) > 1:
                    multi += 1
                    alone = _replay(
                        judge, prompt, episode.accepted, lesson, lesson, reference=False
                    )
                    without_reference_failed += alone.verdict == "fail"
            # The same work served only its first lesson: the user steers in the rest.
            first = episode.served[0]
            session = Agent(world, explains=1.0).session(episode.task, examples.block([first]))
            assert session.outcome.ok
            if session.steered:
                verdict = _replay(judge, prompt, session.outcome.text, first, first)
                assert verdict.verdict == "pass", (episode.task, verdict.reason)
                steered += 1
    assert replays > 100 and multi > 30 and steered > 30
    assert without_reference_failed > multi // 2


def test_a_compression_that_lost_what_the_outcome_relied_on_fails_replay():
    failed = checked = 0
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world, seed=ws), cache_path=None, events_path=None)
        for episode in examples.episodes(world):
            if not episode.accepted:
                continue
            for lesson in episode.served:
                stated = set(world.stated(episode.accepted)) & set(world.facts_in(lesson["body"]))
                if not stated:
                    continue
                lost = sorted(stated)[0]
                kept = [f for f in world.facts_in(lesson["body"]) if f != lost]
                if not kept:
                    continue
                cut = {**examples.lesson(world, lesson["id"], kept, verbose=False)}
                verdict = _replay(judge, episode.task.prompt, episode.accepted, cut, lesson)
                failed += verdict.verdict == "fail"
                checked += 1
                if verdict.verdict == "fail":
                    assert world.facts[lost].terse in verdict.reason  # a preserve hint
    assert checked > 50 and failed == checked
