"""Formats one `fieldstore bench compare --json` result (stdin) as a Markdown table row."""
import json
import sys

d = json.load(sys.stdin)
w = d["workload"]
phases = {r["phase"]: r for r in d["phases"]}
size = w["field_size"]
label = f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"
fields = w["nsteps"] * w["nlevels"] * w["nparams"]
cells = [label, str(d["procs"]), str(fields)]
for name in ("archive+flush", "list", "retrieve", "list, new process", "retrieve, new process"):
    r = phases[name]
    cells += [f"{r['fdb5_seconds']:.4f}", f"{r['fieldstore_seconds']:.4f}", f"{r['speedup']:.2f}"]
archive = d["fieldstore_archive_bytes_per_second"]
cells += [f"{archive / 1048576:.0f}", f"{100 * archive / d['dd_write_bytes_per_second']:.0f}"]
cells += [f"{100 * archive / d['dd_synced_write_bytes_per_second']:.0f}"]
retrieve = fields * size * max(d["procs"], 1) / phases["retrieve, new process"]["fieldstore_seconds"]
cells += [f"{retrieve / 1048576:.0f}", f"{100 * retrieve / d['dd_read_bytes_per_second']:.0f}"]
print("| " + " | ".join(cells) + " |")
