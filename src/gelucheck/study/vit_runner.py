"""``gelucheck study vit``: every seed trains one ViT per activation on load_digits, swaps the
GELU-trained network's activation at inference, and fine-tunes each swap that hurts; seeds
spread over processes, each single-threaded, so the result does not depend on how many."""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from . import stats
from .finetune import fine_tune, gap_closed
from .runner import Swap, in_processes, validate_common
from .vit import VitConfig, accuracy, data, train

SCHEMA = 1
TRAINED = "gelu"  # the swaps start from the network trained with exact GELU
SWAPS = (Swap(TRAINED, TRAINED), Swap(TRAINED, "relu"), Swap(TRAINED, "gelu_tanh"),
         Swap(TRAINED, "quick_gelu"), Swap(TRAINED, TRAINED, "bfloat16"),
         Swap(TRAINED, TRAINED, "float16"))


def validate(config: VitConfig) -> None:
    """Refuse what cannot run, before any training starts."""
    for name, value in (("--seeds", config.seeds), ("--epochs", config.epochs),
                        ("--dim", config.dim), ("--heads", config.heads),
                        ("--depth", config.depth), ("--mlp", config.mlp),
                        ("--batch-size", config.batch_size)):
        if value < 1:
            raise UsageError(f"{name} {value}: need at least 1")
    if config.patch not in (1, 2, 4, 8):
        raise UsageError(f"--patch {config.patch}: the 8x8 images split into patches of 1, 2, "
                         "4 or 8")
    if config.dim % config.heads:
        raise UsageError(f"--dim {config.dim} is not a multiple of --heads {config.heads}")
    validate_common(config, "--fine-tune-epochs")
    if TRAINED not in config.activations:
        raise UsageError(f"--activation: the swaps start from the network trained with "
                         f"{TRAINED}: include it")


def run_seed(config: VitConfig, seed: int) -> dict:
    """One seed: a ViT per activation (same split, weights and batches), then the swaps of
    the GELU-trained one and the fine-tuning of those that hurt."""
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    digits = data(config, seed)
    x_train, y_train = torch.from_numpy(digits.x_train), torch.from_numpy(digits.y_train)
    x_test, y_test = torch.from_numpy(digits.x_test), torch.from_numpy(digits.y_test)
    record: dict = {"seed": seed, "data": {k: len(v) for k, v in digits.index.items()},
                    "runs": {}, "swaps": []}
    models = {}
    for a in config.activations:
        model, curve = train(config, digits, seed, a)
        models[a] = model
        record["runs"][a] = {"test_accuracy": accuracy(model, x_test, y_test),
                             "val_accuracy": curve}
    model, original = models[TRAINED], record["runs"][TRAINED]["test_accuracy"]
    for s in SWAPS:
        fn = s.function()
        model.eval()
        with torch.no_grad():
            before, after = model(x_test), model(x_test, fn)
        swapped = accuracy(model, x_test, y_test, fn)
        row = {"label": s.label, "evaluated": s.evaluated, "dtype": s.dtype,
               "accuracy_change": swapped - original,
               "flip_share": float((before.argmax(1) != after.argmax(1)).double().mean()),
               "max_logit_change": float((after - before).abs().max()), "fine_tune": None}
        if swapped < original:  # it hurts: how much of the loss does fine-tuning win back?
            tuned = fine_tune(model, fn, (x_train, y_train), (x_test, y_test),
                              config.fine_tune, config.fine_tune_lr, config.batch_size, seed,
                              accuracy)
            row["fine_tune"] = {str(k): {"accuracy": v, "gap_closed": gap_closed(
                original, swapped, v)} for k, v in tuned.items()}
        record["swaps"].append(row)
    if any(r["fine_tune"] for r in record["swaps"]):
        # the unswapped network fine-tuned alike: what the extra epochs give by themselves
        # (the networks may still be improving), against which a recovery is measured
        record["control_fine_tune"] = {str(k): v for k, v in fine_tune(
            model, None, (x_train, y_train), (x_test, y_test), config.fine_tune,
            config.fine_tune_lr, config.batch_size, seed, accuracy).items()}
    return record


def run(config: VitConfig, workers: int = 1, progress: bool = True) -> dict:
    """The whole study as a JSON-ready dict (no times, no paths: two runs give the same
    bytes)."""
    validate(config)
    seeds = [config.first_seed + k for k in range(config.seeds)]
    records = in_processes(run_seed, [(config, s) for s in seeds], workers, progress,
                           "load_digits ViT seeds")
    return assemble(config, records)


def assemble(config: VitConfig, records: list[dict]) -> dict:
    acts = config.activations
    per = {a: [r["runs"][a]["test_accuracy"] for r in records] for a in acts}
    summary = {a: {"test_accuracy": stats.summary(per[a])} for a in acts}
    baseline = "relu" if "relu" in acts else acts[0]
    pairs = {a: {"against": baseline,
                 "test_accuracy": stats.paired(per[a], per[baseline])}
             for a in acts if a != baseline}
    swap_rows = []
    for k, s in enumerate(SWAPS):
        rows = [r["swaps"][k] for r in records]
        hurt = [r for r in rows if r["fine_tune"] is not None]
        recovery = {}
        for epochs in config.fine_tune:
            key = str(epochs)
            after = [r["fine_tune"][key]["accuracy"] - records[i]["runs"][TRAINED][
                "test_accuracy"] for i, r in enumerate(rows) if r["fine_tune"] is not None]
            control = [r["fine_tune"][key]["accuracy"] - records[i]["control_fine_tune"][key]
                       for i, r in enumerate(rows) if r["fine_tune"] is not None]
            recovery[key] = {
                "seeds": len(hurt),  # over the seeds where the swap hurt
                "accuracy_change": stats.summary(after) if hurt else None,
                # against the unswapped network fine-tuned for as many epochs
                "versus_control": stats.summary(control) if hurt else None,
                "gap_closed": (stats.summary([r["fine_tune"][key]["gap_closed"] for r in hurt])
                               if hurt else None)}
        swap_rows.append({
            "label": s.label, "evaluated": s.evaluated, "dtype": s.dtype,
            "accuracy_change": stats.summary([r["accuracy_change"] for r in rows]),
            "flip_share_mean": float(np.mean([r["flip_share"] for r in rows])),
            "flip_share_max": max(r["flip_share"] for r in rows),
            "seeds_hurt": len(hurt),
            "max_logit_change": max(r["max_logit_change"] for r in rows),
            "recovery": recovery})
    from .. import __version__

    return {"kind": "study", "study": "vit", "schema_version": SCHEMA,
            "gelucheck": __version__, "config": config.to_json(),
            "architecture": config.architecture, "baseline": baseline, "trained": TRAINED,
            "summary": summary, "paired": pairs, "swaps": swap_rows, "seeds": records}
