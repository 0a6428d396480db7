"""`iorelay analyze` figures, checked through their data (series, axes, labels), not pixels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iorelay.analysis import compute, plots


def _runs() -> pd.DataFrame:
    """2 request sizes x 2 process counts, one layout; ionodes 0, 1, 2 with medians in ratio
    1:2:4. With 6 runs each, 2 is best, 1 is not significantly worse (Dunn's Holm p ≈ 0.1), and
    0 is: two choices matter in every pattern."""
    rows = []
    for req in (1 << 20, 4 << 20):
        for procs in (16, 32):
            for ionodes, base in ((0, 100.0), (1, 200.0), (2, 400.0)):
                for rep in range(6):
                    bw = base * (procs / 16) + rep
                    rows.append(
                        {
                            "layout": "shared",
                            "spatiality": "contiguous",
                            "nodes": 4,
                            "processes": procs,
                            "request_bytes": req,
                            "ionodes": ionodes,
                            "bandwidth_mib_s": bw,
                        }
                    )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def analysis() -> compute.Analysis:
    return compute.analyze(_runs())


def _line(ax, label: str):
    (line,) = [ln for ln in ax.lines if ln.get_label() == label]
    return line


def test_option_grid_series_and_axes(analysis: compute.Analysis) -> None:
    [(name, frame)] = plots.facets(analysis.options, analysis.spec)
    assert name == "shared-contiguous"
    fig = plots.plot_option_grid(frame, analysis.spec, name)
    axes = np.array(fig.axes).reshape(2, 2)  # rows: processes 16, 32; columns: 1M, 4M
    assert [ax.get_title() for ax in axes[0]] == ["1M", "4M"]
    assert axes[0][0].get_ylabel() == "16 procs" and axes[1][0].get_ylabel() == "32 procs"
    ax = axes[1][1]  # 32 procs, 4M: medians 2·base + 2.5
    assert _line(ax, plots.LABEL_MEDIAN).get_ydata().tolist() == [202.5, 402.5, 802.5]
    assert _line(ax, plots.LABEL_MEDIAN).get_xdata().tolist() == [0.0, 1.0, 2.0]
    assert _line(ax, plots.LABEL_BEST).get_xdata().tolist() == [2.0]
    assert _line(ax, plots.LABEL_NOT_WORSE).get_xdata().tolist() == [1.0, 2.0]
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] == pytest.approx(805 * 1.08)
    assert ax.get_xlim() == (-0.5, 2.5)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert fig.get_suptitle() == name
    assert fig._supylabel.get_text() == "bandwidth (MiB/s)"
    assert fig._supxlabel.get_text() == "I/O nodes"


def test_best_heatmap_values_and_labels(analysis: compute.Analysis) -> None:
    fig = plots.plot_best_heatmap(analysis.patterns, analysis.spec)
    ax = fig.axes[0]
    assert ax.images[0].get_array().tolist() == [[2, 2], [2, 2]]  # index of option 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1M", "4M"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["16 procs", "32 procs"]
    assert sorted(t.get_text() for t in ax.texts) == ["2 (2)"] * 4
    assert ax.get_xlabel() == "request size"


def test_choices_bars(analysis: compute.Analysis) -> None:
    fig = plots.plot_choices(analysis.choices, analysis.spec)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == analysis.choices["n_patterns"].tolist() == [0, 4, 0]
    assert [p.get_x() + p.get_width() / 2 for p in ax.patches] == [1.0, 2.0, 3.0]
    assert ax.get_ylim() == pytest.approx((0, 4 * 1.15))
    assert ax.get_xlabel() == "number of choices of I/O nodes that matter"
    assert ax.get_ylabel() == "patterns"


def test_best_bars(analysis: compute.Analysis) -> None:
    ax = plots.plot_best(analysis.best, analysis.spec).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [0, 0, 4, 0, 4, 4]  # best per option, then not-worse per option
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]


def test_save_writes_png(analysis: compute.Analysis, tmp_path) -> None:
    path = tmp_path / "c.png"
    plots.save(plots.plot_choices(analysis.choices, analysis.spec), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("request_sizes", [1, 2])
def test_option_grid_title_legend_and_column_titles_do_not_overlap(
    analysis: compute.Analysis, request_sizes: int
) -> None:
    """The head of a grid, drawn: the title above the legend above the column titles, inside
    the figure, with one request size (a narrow figure) as with two."""
    [(name, frame)] = plots.facets(analysis.options, analysis.spec)
    frame = frame[frame["request_bytes"] == 1 << 20] if request_sizes == 1 else frame
    fig = plots.plot_option_grid(frame, analysis.spec, name)
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    title = fig._suptitle.get_window_extent(renderer)
    legend = fig.legends[0].get_window_extent(renderer)
    top_axes = max(ax.get_window_extent(renderer).y1 for ax in fig.axes)
    column_titles = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()]
    figure = fig.bbox
    assert title.y0 >= legend.y1  # display coordinates: y grows upwards
    for box in column_titles:
        assert legend.y0 >= box.y1
    assert legend.y0 >= top_axes
    for box in (title, legend):
        assert figure.x0 <= box.x0 and box.x1 <= figure.x1 and box.y1 <= figure.y1
