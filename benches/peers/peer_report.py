"""What both peers scripts (stencil_peers.py, merge_peers.py) do with their results: the JSON
report to --out (and the table on stdout), or the JSON on stdout and the table on stderr; with
--append, the rows already in --out that this run does not replace, first."""
import json
import os
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


def appended(path, report, row_key, script):
    """For --append: the rows already in `path` (if it exists) whose `row_key` no row of `report`
    has, so that a long run can be split over several calls. A file that is not a result of
    `script` is replaced (with a note); one measured on another GPU is kept, with a note."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            previous = json.load(f)
        rows = list(previous["rows"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"{script}: --append: {path} is not a {script}.py result ({error}); it is replaced", file=sys.stderr)
        return []
    if previous.get("gpu") != report["gpu"]:
        print(f"{script}: --append: {path} was measured on {previous.get('gpu')}, this run on {report['gpu']}",
              file=sys.stderr)
    replaced = {row_key(r) for r in report["rows"]}
    return [r for r in rows if row_key(r) not in replaced]
