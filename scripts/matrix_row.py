"""Formats one `fieldstore bench compare --json` result (stdin) as a Markdown table row."""
import json
import sys

d = json.load(sys.stdin)
w = d["workload"]
phases = {r["phase"]: r for r in d["phases"]}
size = w["field_size"]
label = f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"
cells = [label, str(d["procs"]), str(w["nsteps"] * w["nlevels"] * w["nparams"])]
for name in ("archive+flush", "list", "retrieve"):
    r = phases[name]
    cells += [f"{r['fdb5_seconds']:.4f}", f"{r['fieldstore_seconds']:.4f}", f"{r['speedup']:.2f}"]
bandwidth = d["fieldstore_archive_bytes_per_second"]
cells += [f"{bandwidth / 1048576:.0f}", f"{100 * bandwidth / d['dd_write_bytes_per_second']:.0f}"]
print("| " + " | ".join(cells) + " |")
