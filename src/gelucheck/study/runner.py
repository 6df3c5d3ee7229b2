"""``gelucheck study moons``: every seed trains one network per activation and tries the
swaps; seeds spread over processes, each single-threaded, so the result does not depend on
how many there are."""
from __future__ import annotations

import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UsageError, choose
from ..progress import bar as progress_bar
from . import stats
from .activations import ACTIVATIONS, in_dtype
from .finetune import fine_tune, gap_closed
from .moons import Config, data, evaluate, train

SCHEMA = 1
SWAP_DTYPES = ("bfloat16", "float16")


@dataclass(frozen=True)
class Swap:
    """A network trained with ``trained`` evaluated with ``evaluated`` computed in ``dtype``."""

    trained: str
    evaluated: str
    dtype: str = "float32"

    @property
    def label(self) -> str:
        if self.trained == self.evaluated and self.dtype == "float32":
            return f"{self.trained} -> {self.evaluated} (control)"
        suffix = f" in {self.dtype}" if self.dtype != "float32" else ""
        return f"{self.trained} -> {self.evaluated}{suffix}"

    def function(self):
        import torch

        fn = ACTIVATIONS[self.evaluated].make()
        return fn if self.dtype == "float32" else in_dtype(fn, getattr(torch, self.dtype))


def swaps(config: Config) -> list[Swap]:
    """Per trained activation: itself (a control: nothing may change), each other activation
    of the study, and itself computed in bfloat16 and float16."""
    out = []
    for a in config.activations:
        out.append(Swap(a, a))
        out += [Swap(a, b) for b in config.activations if b != a]
        out += [Swap(a, a, d) for d in SWAP_DTYPES]
    return out


def validate(config: Config) -> None:
    """Refuse what cannot run, before any training starts."""
    if config.seeds < 1:
        raise UsageError(f"--seeds {config.seeds}: need at least 1 seed")
    if config.epochs < 1:
        raise UsageError(f"--epochs {config.epochs}: need at least 1 epoch")
    if not config.noise >= 0:
        raise UsageError(f"--noise {config.noise}: need a standard deviation of 0 or more")
    if config.samples < 20:
        raise UsageError(f"--samples {config.samples}: need at least 20 points")
    if not config.hidden or min(config.hidden) < 1:
        raise UsageError(f"--hidden {config.hidden}: need one or more layer widths of at least 1")
    if config.batch_size < 1:
        raise UsageError(f"--batch-size {config.batch_size}: need at least 1")
    validate_common(config, "--fine-tune")


def validate_common(config, fine_tune_option: str) -> None:
    """What every study refuses alike: a learning rate that is not a positive number (Adam
    refused it only once training began), fine-tuning epoch counts that repeat or are
    negative, an unknown or repeated activation, a missing scikit-learn or torch."""
    for option, lr in (("--lr", config.lr), ("--fine-tune-lr", config.fine_tune_lr)):
        if not 0 < lr < math.inf:
            raise UsageError(f"{option} {lr}: need a positive learning rate")
    counts = config.fine_tune
    if min(counts, default=0) < 0 or len(set(counts)) < len(counts):
        raise UsageError(f"{fine_tune_option} {counts}: distinct counts of 0 or more")
    for a in config.activations:
        choose("activation", a, ACTIVATIONS)
    if len(set(config.activations)) < len(config.activations):
        raise UsageError(f"--activation: each at most once (got {', '.join(config.activations)})")
    for module, extra in (("sklearn", "study"), ("torch", "torch")):
        try:
            __import__(module)
        except ImportError:
            raise UsageError(f"the study needs {module}, which is not installed: "
                             f"pip install 'gelucheck[{extra}]'") from None


def run_seed(config: Config, seed: int, keep_weights: bool) -> dict:
    """One seed: a network per activation (same data, weights and batches), then the swaps."""
    import torch

    torch.set_num_threads(1)  # one seed per process; one thread keeps the sums in one order
    torch.use_deterministic_algorithms(True)
    split = data(config, seed)
    x_test, y_test = torch.from_numpy(split.x_test), torch.from_numpy(split.y_test)
    x_train, y_train = torch.from_numpy(split.x_train), torch.from_numpy(split.y_train)
    record: dict[str, Any] = {"seed": seed, "data": {k: len(v) for k, v in split.index.items()},
              "runs": {}, "swaps": []}
    models = {}
    for a in config.activations:
        t = train(config, split, seed, a)
        models[a] = t.model
        pre: list[torch.Tensor] = []
        with torch.no_grad():
            t.model(x_test, pre=pre)
        values = torch.cat([p.flatten() for p in pre])
        record["runs"][a] = {"test_accuracy": t.test_accuracy, "test_loss": t.test_loss,
                             "val_loss": t.val_loss, "val_accuracy": t.val_accuracy,
                             "pre_activation_range": [float(values.min()),
                                                      float(values.max())]}
        if keep_weights:
            record["runs"][a]["weights"] = {k: v.tolist()
                                            for k, v in t.model.state_dict().items()}
    for s in swaps(config):
        model = models[s.trained]
        with torch.no_grad():
            before, after = model(x_test), model(x_test, s.function())
        _, accuracy = evaluate(model, x_test, y_test, s.function())
        original = record["runs"][s.trained]["test_accuracy"]
        row = {"trained": s.trained, "evaluated": s.evaluated, "dtype": s.dtype,
               "accuracy_change": accuracy - original,
               "flip_share": float((before.argmax(1) != after.argmax(1)).double().mean()),
               "max_logit_change": float((after - before).abs().max())}
        if config.fine_tune:  # --fine-tune: how much of what the swap lost comes back
            tuned = None if accuracy >= original else fine_tune(
                model, s.function(), (x_train, y_train), (x_test, y_test), config.fine_tune,
                config.fine_tune_lr, config.batch_size, seed,
                lambda m, x, y, act: evaluate(m, x, y, act)[1])
            row["fine_tune"] = None if tuned is None else {
                str(k): {"accuracy": v, "gap_closed": gap_closed(original, accuracy, v)}
                for k, v in tuned.items()}
        record["swaps"].append(row)
    return record


def _call(job) -> dict:
    fn, args = job
    return fn(*args)


def in_processes(fn, jobs: list[tuple], workers: int, progress: bool, label: str) -> list:
    """fn(*job) for every job, in job order: in spawned processes where ``workers`` > 1 (each
    seed single-threaded, so the figures do not depend on how many), else here - with this
    process's thread count and determinism put back afterwards."""
    bar = progress_bar(len(jobs), label, progress, unit="seed")
    records = []
    try:
        if workers > 1:
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx) as pool:
                for r in pool.map(_call, [(fn, job) for job in jobs]):  # in order
                    records.append(r)
                    bar.update(1)
        else:
            import torch

            # run_seed sets these for its process; this one is the caller's: put them back
            threads = torch.get_num_threads()
            deterministic = torch.are_deterministic_algorithms_enabled()
            try:
                for job in jobs:
                    records.append(fn(*job))
                    bar.update(1)
            finally:
                torch.set_num_threads(threads)
                torch.use_deterministic_algorithms(deterministic)
    finally:
        bar.close()
    return records


def run(config: Config, workers: int = 1, progress: bool = True) -> dict:
    """The whole study as a JSON-ready dict (no times, no paths: two runs give the same bytes)."""
    validate(config)
    seeds = [config.first_seed + k for k in range(config.seeds)]
    jobs = [(config, s, s == seeds[0]) for s in seeds]
    return assemble(config, in_processes(run_seed, jobs, workers, progress,
                                         "make_moons seeds"))


def assemble(config: Config, records: list[dict]) -> dict:
    acts = config.activations
    per = {a: {k: [r["runs"][a][k] for r in records] for k in ("test_accuracy", "test_loss")}
           for a in acts}
    summary = {a: {k: stats.summary(v) for k, v in per[a].items()} for a in acts}
    baseline = "relu" if "relu" in acts else acts[0]
    pairs = {a: {"against": baseline,
                 "test_accuracy": stats.paired(per[a]["test_accuracy"],
                                               per[baseline]["test_accuracy"]),
                 "test_loss": stats.paired(per[a]["test_loss"], per[baseline]["test_loss"],
                                           higher_is_better=False)}
             for a in acts if a != baseline}
    swap_rows = []
    for k, s in enumerate(swaps(config)):
        rows = [r["swaps"][k] for r in records]
        lo = min(r["runs"][s.trained]["pre_activation_range"][0] for r in records)
        hi = max(r["runs"][s.trained]["pre_activation_range"][1] for r in records)
        swap_rows.append({
            "label": s.label, "trained": s.trained, "evaluated": s.evaluated, "dtype": s.dtype,
            "accuracy_change": stats.summary([r["accuracy_change"] for r in rows]),
            "flip_share_mean": float(np.mean([r["flip_share"] for r in rows])),
            "flip_share_max": max(r["flip_share"] for r in rows),
            "seeds_with_flips": sum(r["flip_share"] > 0 for r in rows),
            "max_logit_change": max(r["max_logit_change"] for r in rows),
            "activation_drift": activation_drift(s, lo, hi),
            **({"recovery": recovery(config, records, k)} if config.fine_tune else {})})
    from .. import __version__

    return {"kind": "study", "study": "moons", "schema_version": SCHEMA,
            "gelucheck": __version__, "config": config.to_json(),
            "architecture": config.architecture, "baseline": baseline,
            "summary": summary, "paired": pairs, "swaps": swap_rows, "seeds": records}


def recovery(config: Config, records: list[dict], k: int) -> dict:
    """Swap k's fine-tuning over the seeds where it hurt: per number of epochs, the accuracy
    against the original network's and the share of the loss won back (summaries)."""
    hurt = [(r["swaps"][k], r["runs"][r["swaps"][k]["trained"]]["test_accuracy"])
            for r in records if r["swaps"][k].get("fine_tune")]
    out = {}
    for epochs in config.fine_tune:
        key = str(epochs)
        out[key] = {"seeds": len(hurt),
                    "accuracy_change": stats.summary([row["fine_tune"][key]["accuracy"] - base
                                                      for row, base in hurt]) if hurt else None,
                    "gap_closed": stats.summary([row["fine_tune"][key]["gap_closed"]
                                                 for row, _ in hurt]) if hurt else None}
    return out


def activation_drift(swap: Swap, lo: float, hi: float) -> dict:
    """max |f_swapped(x) − f_trained(x)| over gelucheck's stored float32 inputs in [lo, hi]
    (the pre-activations the trained networks saw on their test sets), as torch computes
    both: the per-input figure beside what the swap does to a whole network."""
    import torch

    from ..checks.reference_data import table
    from ..formats import FLOAT32
    from ..functions import GELU

    stored = table(FLOAT32, GELU).x
    x = torch.from_numpy(stored[(stored >= lo) & (stored <= hi)])
    with torch.no_grad():
        d = (swap.function()(x) - ACTIVATIONS[swap.trained].make()(x)).abs()
    i = int(d.argmax())
    return {"range": [lo, hi], "inputs": int(x.numel()), "max_abs": float(d[i]),
            "at": float(x[i]), "differ_share": float((d > 0).double().mean())}
