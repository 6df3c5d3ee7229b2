"""``gelucheck study moons``: its options and what it runs and writes."""
from __future__ import annotations

import os
import time

from .activations import ACTIVATIONS, DEFAULT
from .moons import Config


def _widths(text: str) -> tuple[int, ...]:
    import argparse

    try:
        return tuple(int(w) for w in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: layer widths separated by commas, "
                                         "e.g. 32,32") from None


def add(sub) -> None:
    study = sub.add_parser("study", help="what the numbers mean for a trained network")
    study.set_defaults(handler=run)
    kinds = study.add_subparsers(dest="study", required=True)
    d = Config()
    moons = kinds.add_parser(
        "moons", help="identical MLPs with ReLU and GELU on make_moons over many seeds, and "
        "what swapping the activation of a trained network does (needs gelucheck[study])")
    moons.add_argument("--seeds", type=int, default=d.seeds, help=f"default {d.seeds}")
    moons.add_argument("--first-seed", type=int, default=d.first_seed,
                       help=f"default {d.first_seed}")
    moons.add_argument("--epochs", type=int, default=d.epochs, help=f"default {d.epochs}")
    moons.add_argument("--samples", type=int, default=d.samples, help=f"default {d.samples}")
    moons.add_argument("--noise", type=float, default=d.noise,
                       help=f"make_moons' noise, default {d.noise}")
    moons.add_argument("--hidden", type=_widths, default=d.hidden,
                       help=f"hidden layer widths, default {','.join(map(str, d.hidden))}")
    moons.add_argument("--batch-size", type=int, default=d.batch_size,
                       help=f"default {d.batch_size}")
    moons.add_argument("--lr", type=float, default=d.lr, help=f"Adam's, default {d.lr}")
    moons.add_argument("--activation", action="append", metavar="NAME",
                       help=f"one of {', '.join(ACTIVATIONS)} (repeatable; default: "
                       f"{', '.join(DEFAULT)})")
    _add_outputs(moons)
    moons.add_argument("--fine-tune", type=_counts, default=(), metavar="K,K,...",
                       help="also fine-tune each swap that hurts for these numbers of epochs "
                       "(e.g. 0,1,2,5,10) and report the share of the loss won back")
    moons.add_argument("--fine-tune-lr", type=float, default=d.fine_tune_lr,
                       help=f"Adam's while fine-tuning, default {d.fine_tune_lr}")
    _add_vit(kinds)


def _counts(text: str) -> tuple[int, ...]:
    import argparse

    try:
        return tuple(int(k) for k in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: epoch counts separated by commas, "
                                         "e.g. 0,1,2,5,10") from None


def _shares(text: str) -> tuple[float, float, float]:
    import argparse
    import math

    try:
        shares = tuple(float(v) for v in text.split(","))
    except ValueError:
        shares = ()
    if len(shares) != 3 or min(shares) <= 0 or not math.isclose(sum(shares), 1.0):
        raise argparse.ArgumentTypeError(f"{text!r}: three positive shares that add up to 1, "
                                         "e.g. 0.6,0.2,0.2")
    return shares  # type: ignore[return-value]


def _add_vit(kinds) -> None:
    from .vit import DEFAULT_VIT, VitConfig

    d = VitConfig()
    vit = kinds.add_parser(
        "vit", help="a small Vision Transformer on load_digits with GELU, its tanh form, ReLU "
        "and SiLU in its feed-forward blocks; swaps at inference and fine-tuning after them "
        "(needs gelucheck[study])")
    vit.set_defaults(handler=run_vit)
    for name, kind, default, what in (
            ("seeds", int, d.seeds, ""), ("first-seed", int, d.first_seed, ""),
            ("epochs", int, d.epochs, ""), ("patch", int, d.patch, "patch side in pixels"),
            ("dim", int, d.dim, "token width"), ("heads", int, d.heads, "attention heads"),
            ("depth", int, d.depth, "encoder blocks"), ("mlp", int, d.mlp, "FFN hidden width"),
            ("batch-size", int, d.batch_size, ""), ("lr", float, d.lr, "Adam's"),
            ("fine-tune-lr", float, d.fine_tune_lr, "Adam's while fine-tuning")):
        vit.add_argument(f"--{name}", type=kind, default=default,
                         help=f"{what + ', ' if what else ''}default {default}")
    vit.add_argument("--split", type=_shares, default=d.split, metavar="TRAIN,VAL,TEST",
                     help="shares of the images, stratified by digit, default "
                     f"{','.join(map(str, d.split))} (the test part only for the final figures)")
    vit.add_argument("--fine-tune-epochs", type=_counts, default=d.fine_tune, metavar="K,K,...",
                     help=f"epochs of fine-tuning after each swap that hurts, default "
                     f"{','.join(map(str, d.fine_tune))}")
    vit.add_argument("--activation", action="append", metavar="NAME",
                     help=f"one of {', '.join(ACTIVATIONS)} (repeatable; default: "
                     f"{', '.join(DEFAULT_VIT)}; gelu is needed: the swaps start from it)")
    _add_outputs(vit)


def _add_outputs(p) -> None:
    """The workers and the outputs every study takes."""
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="processes, one seed each at a time (the result is the same for any "
                   "number; default: the number of cores)")
    p.add_argument("--json", metavar="FILE", help="write the study as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    p.add_argument("--plots", metavar="DIR", help="write the figures as PNG")
    p.add_argument("--html", metavar="FILE", help="write the study as one HTML page")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _study(args, config, validate, run, render, write_plots, html_section,
           done: str = "") -> int:
    """What every study command does: refuse bad options and output paths before training,
    run, print the tables and the time, write what was asked for."""
    import sys

    from .. import output_files
    from ..errors import UsageError
    from . import output

    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: need at least 1")
    validate(config)
    json_path = output_files.file(args.json, "--json")
    markdown_path = output_files.file(args.markdown, "--markdown")
    html_path = output_files.file(args.html, "--html")
    plots_dir = output_files.folder(args.plots, "--plots")
    output_files.distinct(("--json", json_path), ("--markdown", markdown_path),
                          ("--html", html_path), ("--plots", plots_dir))
    start = time.perf_counter()
    study = run(config, args.workers, progress=not args.no_progress)
    print(render(study))
    print(f"{config.seeds} seeds x {len(config.activations)} activations x {config.epochs} "
          f"epochs{done} in {time.perf_counter() - start:.1f} s ({args.workers} workers)",
          file=sys.stderr)
    if json_path:
        output.write_json(study, json_path)
    if markdown_path:
        markdown_path.write_text(render(study, "markdown"))
    if plots_dir:
        for path in write_plots(study, plots_dir):
            print(f"wrote {path}", file=sys.stderr)
    if html_path:
        from ..report import html

        html_path.write_text(html.render([], extra=[html_section(study)]))
        print(f"{html_path}: {html_path.stat().st_size / 1e6:.2f} MB", file=sys.stderr)
    return 0


def run_vit(args) -> int:
    from . import vit_output, vit_runner
    from .vit import DEFAULT_VIT, VitConfig

    config = VitConfig(seeds=args.seeds, first_seed=args.first_seed, epochs=args.epochs,
                       patch=args.patch, dim=args.dim, heads=args.heads, depth=args.depth,
                       mlp=args.mlp, batch_size=args.batch_size, lr=args.lr,
                       fine_tune_lr=args.fine_tune_lr, fine_tune=args.fine_tune_epochs,
                       activations=tuple(args.activation or DEFAULT_VIT), split=args.split)
    return _study(args, config, vit_runner.validate, vit_runner.run, vit_output.render,
                  vit_output.write_plots, vit_output.html_section, ", swaps and fine-tuning")


def run(args) -> int:
    from . import output, plots, runner

    config = Config(seeds=args.seeds, epochs=args.epochs, samples=args.samples,
                    noise=args.noise, hidden=args.hidden, batch_size=args.batch_size,
                    lr=args.lr, activations=tuple(args.activation or DEFAULT),
                    first_seed=args.first_seed, fine_tune=args.fine_tune,
                    fine_tune_lr=args.fine_tune_lr)
    return _study(args, config, runner.validate, runner.run, output.render, plots.write,
                  output.html_section)
