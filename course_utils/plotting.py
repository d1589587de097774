"""The course's matplotlib style and the plots the tutorials share.

Every plot has a title and labelled axes. The style sheet is ``assets/course.mplstyle``
and is applied by ``use_course_style()`` (nothing is loaded from a URL). ``LiveView`` is the
one live display of a long run: a line of text, a figure or an animation replaced in place.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from course_utils.paths import ASSETS

STYLE = ASSETS / "course.mplstyle"


class LiveView:
    """One output area for the latest of a series of views (a line of text and, e.g., an
    animation or a figure), replaced in place at each ``show``: what the cell showed before it,
    such as a progress bar, stays (``clear_output`` would wipe the whole cell's output)."""

    def __init__(self):
        self._handle = None

    def show(self, text: str, html=None) -> None:
        """Show ``text`` and ``html`` (an ``IPython.display.HTML``, or None) in place of the last view."""
        import html as escape

        from IPython.display import HTML, display

        body = (f"<pre>{escape.escape(text)}</pre>" if text else "") + (html.data if html is not None else "")
        view = HTML(body)
        if self._handle is None:
            self._handle = display(view, display_id=True)
        else:
            self._handle.update(view)

    def show_figure(self, fig, text: str = "") -> None:
        """Show the matplotlib figure ``fig`` (as a PNG, then closed) and ``text`` in place of the last view."""
        import base64
        import io

        from IPython.display import HTML

        png = io.BytesIO()
        fig.savefig(png, format="png")
        plt.close(fig)
        self.show(text, HTML(f'<img src="data:image/png;base64,{base64.b64encode(png.getvalue()).decode()}"/>'))


def use_course_style() -> None:
    """Apply the course's matplotlib style sheet."""
    plt.style.use(STYLE)


def plot_rewards(rewards, max_rewards, title: str = "Reward per trial", ax=None, label: str = "obtained reward"):
    """Obtained reward against the best reward available, trial by trial (rewards 1-4)."""
    ax = ax or plt.subplots()[1]
    trials = np.arange(1, len(rewards) + 1)
    ax.plot(trials, max_rewards, marker="*", linestyle="--", color="0.55", label="maximum reward")
    ax.plot(trials, rewards, marker="o", label=label)
    ax.set(title=title, xlabel="trial", ylabel="reward", yticks=range(0, 5))
    ax.legend(loc="lower right")
    return ax


def plot_confusion(best, chosen, colours, title: str = "Choices", ax=None):
    """Confusion matrix: rows are the better colour of each pair, columns the colour chosen.

    ``best`` and ``chosen`` are sequences of colour names; ``colours`` fixes the rows and
    columns shown (colours never seen still get a row and a column).
    """
    ax = ax or plt.subplots(figsize=(4.5, 4))[1]
    matrix = confusion_counts(best, chosen, colours)
    ax.imshow(matrix, cmap="Blues", vmin=0)
    dark = matrix.max() / 2 if matrix.size else 0
    for (row, column), count in np.ndenumerate(matrix):
        ax.text(column, row, f"{count:d}", ha="center", va="center", color="white" if count > dark else "black")
    ticks = range(len(colours))
    ax.set(title=title, xlabel="colour chosen", ylabel="better colour", xticks=ticks, yticks=ticks)
    ax.set_xticklabels(list(colours))
    ax.set_yticklabels(list(colours))
    ax.grid(False)
    return ax


def confusion_counts(best, chosen, colours) -> np.ndarray:
    """Counts (len(colours), len(colours)) of int: row ``i`` column ``j`` is how often colour
    ``colours[j]`` was chosen when ``colours[i]`` was the better one (pairs naming another colour
    are left out)."""
    index = {colour: i for i, colour in enumerate(colours)}
    matrix = np.zeros((len(index), len(index)), dtype=int)
    for b, c in zip(best, chosen, strict=True):
        if b in index and c in index:
            matrix[index[b], index[c]] += 1
    return matrix


def plot_pair_accuracy(results: dict[str, dict[str, float]], title: str = "Accuracy per colour pair", ax=None):
    """Grouped bars: for each colour pair, the accuracy (0-1) of each named result."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    pairs = sorted({pair for accuracies in results.values() for pair in accuracies})
    width = 0.8 / max(len(results), 1)
    x = np.arange(len(pairs))
    for i, (name, accuracies) in enumerate(results.items()):
        values = [accuracies.get(pair, np.nan) for pair in pairs]
        ax.bar(x + (i - (len(results) - 1) / 2) * width, values, width, label=name)
    ax.axhline(0.5, color="0.5", linestyle=":", linewidth=1, label="chance")
    ax.set(title=title, xlabel="colour pair", ylabel="chose the better colour", ylim=(0, 1.05), xticks=x)
    ax.set_xticklabels(pairs)
    ax.legend(loc="lower left", fontsize=9)
    return ax


def plot_curve(values, title: str, xlabel: str, ylabel: str, ax=None, label: str | None = None, smooth: int = 1):
    """A learning curve, optionally smoothed with a running mean of ``smooth`` points."""
    ax = ax or plt.subplots()[1]
    values = np.asarray(values, dtype=float)
    if smooth > 1 and len(values) >= smooth:
        values = np.convolve(values, np.ones(smooth) / smooth, mode="valid")
    ax.plot(np.arange(1, len(values) + 1), values, label=label)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if label:
        ax.legend()
    return ax
