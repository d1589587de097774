"""Tutorial 1's accuracy-by-trial measure."""



from course_utils import harlow


def test_accuracy_by_trial_groups_attempts():
    curve = harlow.accuracy_by_trial([1, 2, 1, 2, 3], [True, True, False, True, False])
    assert curve.accuracy.tolist() == [0.5, 1.0, 0.0] and curve.counts.tolist() == [2, 2, 1]


def test_saved_run_plots_are_per_task_and_show_every_hyperparameter():
    from course_utils import harlow

    history = harlow.load_history()
    axes = harlow.plot_hyperparameters(history, harlow.DEFAULT_HYPERPARAMETERS)
    assert [ax.get_title() for ax in axes] == ["learning rate", "discount factor $\\gamma$", "value cost", "entropy cost"]
    newbie_line = [line for line in axes[1].get_lines() if line.get_label() == "newbie"][0]
    assert newbie_line.get_ydata()[0] == harlow.DEFAULT_HYPERPARAMETERS["gamma"]
    ax = harlow.plot_evolution(history, live={"generation": [0, 1, 2], "mean": [50.0, 60.0, 70.0], "num_tasks": 10})
    live = [line for line in ax.get_lines() if "the run above" in line.get_label()][0]
    assert list(live.get_ydata()) == [5.0, 6.0, 7.0] and "per task" in ax.get_ylabel()
    assert max(ax.get_lines()[0].get_ydata()) <= 20
