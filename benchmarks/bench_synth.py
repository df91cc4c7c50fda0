"""How long `make synth` takes and what it produces: run scripts/synth (with or without Lambda
bundling) and print elapsed seconds, resource counts and the Lambda bundle size.

    .venv/bin/python benchmarks/bench_synth.py            # full: pip-installs the Lambda wheels
    .venv/bin/python benchmarks/bench_synth.py --quick    # template only (SKIP_BUNDLING=1)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip Lambda bundling")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.quick:
        env["SKIP_BUNDLING"] = "1"
    start = time.perf_counter()
    out = subprocess.run([str(ROOT / "scripts" / "synth")], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        print(out.stdout[-3000:], out.stderr[-3000:])
        return out.returncode
    template = json.loads(next((ROOT / "cdk.out").glob("*.template.json")).read_text())
    kinds = Counter(r["Type"] for r in template["Resources"].values())
    print(f"synth ({'template only' if args.quick else 'with Lambda bundling'}): {elapsed:.1f} s")
    print(f"resources: {sum(kinds.values())} ({len(kinds)} types); top: {kinds.most_common(5)}")
    assets = [p for p in (ROOT / "cdk.out").glob("asset.*") if p.is_dir() and (p / "benchwright").is_dir()]
    for asset in assets:
        print(f"Lambda bundle {asset.name}: {dir_size(asset) / 1e6:.1f} MB unzipped (Lambda limit 250 MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
