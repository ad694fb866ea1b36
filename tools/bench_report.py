"""Summaries of the benchmark runs: medians per row and allocator, the table
(terminal and markdown), results.json and results.csv."""
import csv
import json
import statistics

from bench_runner import OK

TIME_WINNER, RSS_WINNER = "*", "+"


def summarise(runs, rows, columns_of, reference):
    """One entry per (row, column): medians over the successful reps. A row
    with any failed rep shows the failure: a wrong answer is never averaged
    away."""
    summary = []
    for row in rows:
        key = (row["workload"], row["threads"])
        cells = []
        for column in columns_of[row["workload"]]:
            reps = [r for r in runs if (r["workload"], r["threads"], r["allocator"]) == (*key, column)]
            good = [r for r in reps if r["status"] == OK]
            failed = [r for r in reps if r["status"] != OK]
            cell = {"workload": key[0], "threads": key[1], "allocator": column,
                    "reps": len(reps), "reps_ok": len(good),
                    "status": failed[0]["status"] if failed else (OK if good else "MISSING"),
                    "detail": failed[0]["detail"] if failed else ""}
            if good:
                cell["time_s"] = statistics.median(r["wall_s"] for r in good)
                cell["peak_rss_mb"] = statistics.median(r["peak_rss_mb"] for r in good)
                ops = [float(r["result"]["ops_s"]) for r in good if "ops_s" in r["result"]]
                cell["ops_s"] = statistics.median(ops) if ops else None
                for name in row["figures"]:
                    values = [float(r["result"][name]) for r in good if name in r["result"]]
                    if values:
                        cell[name] = statistics.median(values)
            cells.append(cell)
        ok_cells = [c for c in cells if c["status"] == OK]
        ref = next((c for c in ok_cells if c["allocator"] == reference), None)
        for cell in ok_cells:
            cell["time_ratio"] = cell["time_s"] / ref["time_s"] if ref and ref["time_s"] else None
            cell["rss_ratio"] = (cell["peak_rss_mb"] / ref["peak_rss_mb"]
                                 if ref and ref["peak_rss_mb"] else None)
        if ok_cells:
            min(ok_cells, key=lambda c: c["time_s"])["time_winner"] = True
            min(ok_cells, key=lambda c: c["peak_rss_mb"])["rss_winner"] = True
        summary.extend(cells)
    return summary


def _cell_text(cell, metric):
    if cell is None:
        return "-"
    if cell["status"] != OK:
        return cell["status"]
    if metric == "time":
        text = f"{cell['time_s']:.3f}"
        ratio, won = cell.get("time_ratio"), cell.get("time_winner")
    else:
        text = f"{cell['peak_rss_mb']:.1f}"
        ratio, won = cell.get("rss_ratio"), cell.get("rss_winner")
    if ratio is not None:
        text += f" x{ratio:.2f}"
    return text + (" " + (TIME_WINNER if metric == "time" else RSS_WINNER) if won else "")


def tables(summary, rows, all_columns, reference, markdown):
    """Two tables (time, peak RSS) as lists of lines."""
    out = []
    by_key = {(c["workload"], c["threads"], c["allocator"]): c for c in summary}
    for metric, title in (("time", f"Wall time, seconds (x = ratio to {reference}; "
                                    f"{TIME_WINNER} fastest)"),
                          ("rss", f"Peak RSS, MB (x = ratio to {reference}; "
                                  f"{RSS_WINNER} smallest)")):
        header = ["workload", "T", *all_columns]
        body = []
        for row in rows:
            cells = [by_key.get((row["workload"], row["threads"], col)) for col in all_columns]
            texts = [_cell_text(c, metric) for c in cells]
            if markdown:
                texts = [f"**{t}**" if c and c.get(f"{metric}_winner") else t
                         for t, c in zip(texts, cells)]
            body.append([row["workload"], str(row["threads"]), *texts])
        if markdown:
            out.append(f"**{title}**")
            out.append("")
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "|".join(["---", "--:"] + ["--:"] * len(all_columns)) + "|")
            out += ["| " + " | ".join(line) + " |" for line in body]
        else:
            widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
            out.append(title)
            fmt = lambda r: "  ".join(v.ljust(w) if i < 1 else v.rjust(w)
                                      for i, (v, w) in enumerate(zip(r, widths)))
            out.append(fmt(header))
            out.append("-" * len(fmt(header)))
            out += [fmt(line) for line in body]
        out.append("")
    return out


def failures(summary):
    return [f"{c['workload']} T={c['threads']} {c['allocator']}: {c['status']} {c['detail']}".rstrip()
            for c in summary if c["status"] != OK]


def figures_lines(summary, rows):
    """The workloads' own figures (ops/s and friends), one line per row."""
    out = []
    for row in rows:
        parts = []
        for c in summary:
            if (c["workload"], c["threads"]) != (row["workload"], row["threads"]) or c["status"] != OK:
                continue
            if row["figures"]:
                vals = " ".join(f"{n}={c[n]:.3g}" for n in row["figures"] if n in c)
            else:
                vals = f"{c['ops_s'] / 1e6:.2f}M ops/s" if c.get("ops_s") else ""
            parts.append(f"{c['allocator']} {vals}")
        out.append(f"  {row['workload']:<20} T={row['threads']}: " + "; ".join(parts))
    return out


def write_json(path, meta, runs, summary):
    with open(path, "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": runs}, f, indent=1)


CSV_FIELDS = ["workload", "threads", "allocator", "status", "reps", "reps_ok", "time_s",
              "peak_rss_mb", "ops_s", "time_ratio", "rss_ratio", "time_winner", "rss_winner",
              "detail"]


def write_csv(path, summary):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for cell in summary:
            writer.writerow({k: cell.get(k, "") for k in CSV_FIELDS})
