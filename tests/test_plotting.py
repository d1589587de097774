"""The shared plots: the confusion matrix counts what it shows."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from course_utils.plotting import confusion_counts, plot_confusion  # noqa: E402


def test_confusion_counts_rows_are_the_better_colour_and_columns_the_choice():
    best = ["red", "red", "blue", "green", "blue", "red"]
    chosen = ["red", "blue", "blue", "green", "red", "purple"]  # purple is not shown
    counts = confusion_counts(best, chosen, ["red", "blue", "green", "yellow"])
    assert counts.tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]


def test_plot_confusion_writes_every_count_in_its_cell_with_colour_names():
    ax = plot_confusion(["red", "red", "blue"], ["blue", "red", "blue"], ["red", "blue"], title="t")
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in ax.texts}
    assert texts == {(0, 0): "1", (1, 0): "1", (0, 1): "0", (1, 1): "1"}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["red", "blue"]
    assert ax.get_xlabel() == "colour chosen" and ax.get_ylabel() == "better colour"
    assert np.array_equal(ax.images[0].get_array(), [[1, 1], [0, 1]])
    plt.close(ax.figure)


def test_a_live_view_replaces_its_figure_in_place(monkeypatch):
    import IPython.display

    from course_utils.plotting import LiveView

    shown = []

    class Handle:
        def update(self, view):
            shown.append(("update", view.data))

    def display(view, display_id=False):
        shown.append(("display", view.data))
        return Handle()

    monkeypatch.setattr(IPython.display, "display", display)
    view = LiveView()
    for k in range(2):
        fig, ax = plt.subplots()
        ax.set(title=f"frame {k}", xlabel="x", ylabel="y")
        view.show_figure(fig, f"after {k} frames")
        assert not plt.fignum_exists(fig.number)  # closed once drawn
    assert [kind for kind, _ in shown] == ["display", "update"]
    assert "after 1 frames" in shown[1][1] and "data:image/png;base64," in shown[1][1]
