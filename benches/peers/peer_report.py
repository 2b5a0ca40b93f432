"""What both peers scripts (stencil_peers.py, merge_peers.py) do with their results: the JSON
report to --out (and the table on stdout), or the JSON on stdout and the table on stderr."""
import json
import sys


def write_report(report, table_text, out):
    """Writes `report` as JSON to the file `out` and prints `table_text`, or without `out`
    prints the JSON on stdout and `table_text` on stderr. NaN is refused (not JSON)."""
    text = json.dumps(report, indent=2, allow_nan=False)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
        print(table_text)
        print(f"wrote {out}")
    else:
        print(text)
        print(table_text, file=sys.stderr)
