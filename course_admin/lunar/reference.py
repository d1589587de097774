"""Values computed from the reference solutions at release time: ``make_expected`` runs
``course_admin.lunar.solutions`` to produce ``assets/lunar_expected.json``, the checks'
expected values (which ``course_utils.lunar.expected`` reads), ``write_expected`` writes it
and ``stale_expected`` says when the file no longer matches.

``train_experiments`` (``course train lunar-experiments``) runs the notebook's five experiments
with the reference solutions at full size and stores their curves in
``assets/lunar_experiments.json``, which the notebook shows while a student's classes do not
pass their checks yet.

Instructor side, like the solutions it imports: ``course release`` writes the file and
``course release --check`` fails when it is stale. The checks never import this module.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from course_admin import stored_json
from course_admin.lunar.bandit_oracle import stored_figures
from course_admin.lunar.optional_reference import optional_expected
from course_admin.lunar.solutions import (
    AACPolicyGradientLoss,
    AACPolicyNet,
    ActionEntropyLoss,
    BaselinePolicyGradientLoss,
    Episode,
    PolicyNet,
    PolicyTrainer,
    TrainBatch,
    VanillaPolicyGradientLoss,
)
from course_utils.lunar.expected import EXPECTED_FILE
from course_utils.lunar.experiments import EXPERIMENTS, SEEDS, STORED_RESULTS, Experiment, run_experiments
from course_utils.lunar.harness import Experience


def make_expected(seed: int = 42) -> dict:
    """Inputs and expected outputs of calc_qvals and the losses, from the reference code.

    Everything comes from ``seed``: 100 integer rewards in [-10, 10) for calc_qvals (gamma
    0.9); a fixed batch of 4 synthetic episodes (random lengths 20-60, rewards, actions),
    its q-values (gamma 0.9), action scores from a standard normal and state values for the
    AAC loss. Regenerate the file with ``course release`` (or ``write_expected()``);
    ``course release --check`` and a test check it matches this function.
    """
    rng = np.random.default_rng(seed)
    rewards = rng.integers(-10, 10, 100).astype(float)
    qvals = Episode(float(rewards.sum()), [Experience(None, None, float(r), False) for r in rewards]).calc_qvals(0.9)
    episodes = []
    for _ in range(4):
        length = int(rng.integers(20, 61))
        ep_rewards = np.round(rng.normal(-1.0, 5.0, length), 3)
        ep_actions = rng.integers(0, 4, length)
        states = np.round(rng.normal(0.0, 1.0, (length, 8)), 3).astype(np.float32)
        experiences = [
            Experience(torch.as_tensor(s), int(a), float(r), t == length - 1)
            for t, (s, a, r) in enumerate(zip(states, ep_actions, ep_rewards, strict=True))
        ]
        episodes.append(Episode(float(ep_rewards.sum()), experiences))
    batch = TrainBatch.from_episodes(episodes, 0.9)
    undiscounted = [ep.calc_qvals(1.0) for ep in episodes]
    n = len(batch)
    action_scores = torch.as_tensor(np.round(rng.normal(0.0, 1.0, (n, 4)), 4), dtype=torch.float32)
    state_values = torch.as_tensor(np.round(rng.normal(-5.0, 10.0, n), 3), dtype=torch.float32)
    vpg, _ = VanillaPolicyGradientLoss()(batch, action_scores)
    bpg, info = BaselinePolicyGradientLoss()(batch, action_scores)
    ent, _ = ActionEntropyLoss(4, 1.0)(batch, action_scores)
    aac, aac_info = AACPolicyGradientLoss(1.0)(batch, (action_scores, state_values.view(-1, 1)))
    return {
        # Names the functions as first written (kept so the file stays the same); they are
        # course_admin.lunar.reference.make_expected and write_expected today.
        "how": "course_utils.lunar.make_expected(seed=42); write with course_utils.lunar.write_expected()",
        "calc_qvals": {"gamma": 0.9, "rewards": rewards.tolist(), "qvals": [round(q, 6) for q in qvals]},
        "batch": {
            "gamma": 0.9,
            "episodes": [
                {
                    "states": [[float(x) for x in e.state] for e in ep.experiences],
                    "actions": [e.action for e in ep.experiences],
                    "rewards": [e.reward for e in ep.experiences],
                    # calc_qvals(1.0): the hint for a from_episodes that does not pass gamma on
                    "q_vals_undiscounted": [round(float(q), 6) for q in qs],
                }
                for ep, qs in zip(episodes, undiscounted, strict=True)
            ],
            "q_vals": [round(float(q), 6) for q in batch.q_vals],
            # the batch as the loss checks take it, stacked here so that no code of the student
            # package turns episodes into a batch (Exercise 4)
            "stacked": {
                "states": batch.states.tolist(),
                "actions": batch.actions.tolist(),
                "total_rewards": batch.total_rewards.tolist(),
            },
            "action_scores": action_scores.tolist(),
            "state_values": state_values.tolist(),
        },
        "losses": {
            "vpg": round(vpg.item(), 6),
            "bpg": round(bpg.item(), 6),
            "baseline": round(info["baseline"], 6),
            "entropy_beta1": round(ent.item(), 6),
            "aac_delta1": round(aac.item(), 6),
            "aac_loss_p": round(aac_info["loss_p"], 6),
            "aac_loss_v": round(aac_info["loss_v"], 6),
        },
        "optional": optional_expected(),
        # what the score-function check needs of its cases (bandit_judge.figures): computing it takes
        # the estimator, the exercise's answer
        "score_function": stored_figures(),
        # the identity the notebook prints (course_utils.lunar.variance.score_identity): its terms
        # are score-function gradients on a network
        "score_identity": _score_identity(),
    }


def _score_identity() -> dict:
    from course_admin.lunar.variance import score_identity

    total, terms = score_identity()
    return {"total": total, "terms": terms}


def write_expected(path: Path = EXPECTED_FILE) -> Path:
    """Regenerate ``assets/lunar_expected.json`` from ``make_expected()``; returns the path written."""
    return stored_json.write(path, make_expected())


def stale_expected(path: Path = EXPECTED_FILE) -> list[str]:
    """Why ``path`` no longer holds what ``make_expected()`` computes (``stored_json.stale``): one line
    per differing section, or ``[]`` when it is up to date."""
    return stored_json.stale(path, make_expected())


PG_HP = dict(batch_size=16, gamma=0.99, beta=0.5, learn_rate=2e-3, hidden_layers=(128, 128))
AAC_HP = dict(batch_size=16, gamma=0.99, beta=0.1, delta=0.01, learn_rate=2e-3, critic_steps=4, critic_learn_rate=1e-2,
              hidden_layers=(128, 128))
"""The notebook's default ``pg_hp`` and ``aac_hp`` (a test checks they match its cells)."""
FINAL_LR_DECAY_EPISODES = 20_000
"""``lr_decay_episodes`` of the notebook's long run (Section 8; a test checks it matches the cell)."""
EXPERIMENT_EPISODES = 3000
"""Episodes per experiment at full size (the notebook's ``EXP_EPISODES``)."""


def reference_experiments() -> dict:
    """The notebook's five experiments (vpg, epg, bpg, cpg, aac) with the reference classes and
    the default ``pg_hp`` and ``aac_hp``, as ``experiments.Experiment``s."""
    types = dict(batch_type=TrainBatch, episode_type=Episode)
    experiments = {}
    for name, (baseline, entropy) in EXPERIMENTS.items():
        loss_fns = [BaselinePolicyGradientLoss() if baseline else VanillaPolicyGradientLoss()]
        if entropy:
            loss_fns.append(ActionEntropyLoss(4, PG_HP["beta"]))
        experiments[name] = Experiment(PolicyNet, loss_fns, PolicyTrainer, PG_HP, **types)
    aac_losses = [AACPolicyGradientLoss(AAC_HP["delta"]), ActionEntropyLoss(4, AAC_HP["beta"])]
    experiments["aac"] = Experiment(AACPolicyNet, aac_losses, PolicyTrainer, AAC_HP, **types)
    return experiments


ONE_STEP_CRITIC = "aac, critic_steps=0"
"""The stored ablation: ``aac`` whose critic gets only the one step per batch of the AAC loss."""


def ablation_experiments() -> dict:
    """The runs stored beside the notebook's five (``stored["ablations"]``): ``ONE_STEP_CRITIC``,
    the notebook's aac without the critic's extra steps, which Section 7 compares its critic with."""
    aac = reference_experiments()["aac"]
    return {ONE_STEP_CRITIC: aac._replace(hp={**aac.hp, "critic_steps": 0})}


def train_experiments(progress: bool = True, max_episodes: int = EXPERIMENT_EPISODES, seeds=SEEDS,
                      only=None, force: bool = True) -> dict:
    """``course train lunar-experiments``: vpg, epg, bpg, cpg and aac with the reference
    solutions and every seed of ``SEEDS``, as the notebook runs them, and the ablations
    (``ablation_experiments``); writes their curves to ``assets/lunar_experiments.json``. Wrong
    sizes are refused (by ``run_experiments``) before anything is trained or written: the stored
    runs are what the notebook shows.

    ``only`` (names) trains those experiments again and keeps the others' stored runs, which must
    be of the same size and seeds: for a change that touches one experiment's code or
    hyperparameters, on a machine too busy to train all of them again. ``"retrained"`` in the file
    says which runs each write trained (and where runs came from otherwise), the older entries first.
    ``force=False`` takes runs already in the experiment cache (``run_experiments``: the same code,
    hyperparameters, size and seed), such as runs trained side by side by hand on a busy machine."""
    import datetime

    experiments = {**reference_experiments(), **ablation_experiments()}
    kept, history = {}, []
    if only is not None:
        unknown = set(only) - set(experiments)
        if unknown:
            raise KeyError(f"No experiment named {sorted(unknown)}; there are {list(experiments)}.")
        previous = json.loads(STORED_RESULTS.read_text())
        if previous["max_episodes"] != max_episodes or previous["seeds"] != list(seeds):
            raise ValueError("The stored runs have other sizes: train every experiment (only=None).")
        old = {**previous["runs"], **previous.get("ablations", {})}
        kept = {name: old[name] for name in experiments if name not in only}
        history = previous.get("retrained", [])
        missing = [name for name in experiments if name not in only and name not in kept]
        if missing:
            raise KeyError(f"The stored file has no runs of {missing}: train them too.")
    trained = run_experiments({name: e for name, e in experiments.items() if name not in kept}, max_episodes, seeds,
                              force=force, progress=progress)
    everything = {**kept, **trained}
    stored = {
        "how": "course train lunar-experiments (course_admin.lunar.reference.train_experiments)",
        "max_episodes": max_episodes,
        "seeds": list(seeds),
        "pg_hp": {**PG_HP, "hidden_layers": list(PG_HP["hidden_layers"])},
        "aac_hp": {**AAC_HP, "hidden_layers": list(AAC_HP["hidden_layers"])},
        "runs": {name: _without_weights(everything[name]) for name in reference_experiments()},
        "ablations": {name: _without_weights(everything[name]) for name in ablation_experiments()},
        "retrained": [*history, {"trained": list(trained), "date": datetime.date.today().isoformat()}],
    }
    STORED_RESULTS.write_text(json.dumps(stored) + "\n")
    for name, data in stored["runs"].items():
        print(f"{name}: best mean reward {max(data['mean_reward']):.1f} (mean of seeds {stored['seeds']}) "
              f"over {data['episode_num'][-1]:.0f} episodes")
    print(f"wrote {STORED_RESULTS}")
    return stored


def _without_weights(summary: dict) -> dict:
    runs = [{k: v for k, v in run.items() if k != "model_state"} for run in summary["runs"]]  # stored runs have none
    return {**summary, "runs": runs}
