"""`rag status`: what is indexed (files, chunks, models, disk size, the last ingest)."""

from __future__ import annotations

import time

from raggity.cli.shared import ConfigOption, JsonOption, load, out


def status_command(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """Show what is indexed: files, chunks, models, disk size and the last ingest."""
    from rich.text import Text  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.api.status import device_placements, index_status, model_statuses  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.api.thresholds import answer_thresholds  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    st = index_status(cfg)
    models = model_statuses(cfg)
    devices = device_placements(cfg)
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(
            out,
            {
                **asdict(st),
                "models": [asdict(m) for m in models],
                "devices": [asdict(d) for d in devices],
                "answer_thresholds": answer_thresholds(cfg).summary,
            },
        )
        return
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_ingest)) if st.last_ingest else "never"
    out.print(plain(f"config:      {st.config_file or 'none (defaults)'}"))
    out.print(
        Text.assemble(
            plain(f"index:       {st.index_dir}"),
            ("" if st.exists else "  (not created yet: run rag ingest PATH)", "yellow"),
        )
    )
    # An index on object storage: its committed Lance version instead of a size on disk.
    size = f"{st.disk_bytes / 1e6:.1f} MB" if st.disk_bytes >= 0 else "object storage"
    if st.version is not None:
        size += f", version {st.version}"
    out.print(f"files:       {st.files}\nchunks:      {st.chunks}\ndisk:        {size}\nlast ingest: {last}")
    if st.ocr_pages:
        out.print(f"ocr pages:   {st.ocr_pages} (text read by OCR from scans and images)")
    if st.notice:
        out.print(Text.assemble(("note:", "yellow"), plain(f"        {st.notice}")))
    for m in models:
        state = ("ok", "green") if m.present else ("missing", "yellow")
        line = Text.assemble(plain(f"{m.role + ':':<20} {m.name} "), state, plain(f" {m.path} {m.note}"))
        line.rstrip()
        out.print(line)
    for d in devices:
        out.print(plain(f"{d.role + ' device:':<20} {d.device}: {d.why}"))
    out.print(plain(f"{'answer thresholds:':<20} {answer_thresholds(cfg).summary}"))
