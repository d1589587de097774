"""Tutorial 1's accuracy-by-trial measure."""



from course_utils import harlow


def test_accuracy_by_trial_groups_attempts():
    curve = harlow.accuracy_by_trial([1, 2, 1, 2, 3], [True, True, False, True, False])
    assert curve.accuracy.tolist() == [0.5, 1.0, 0.0] and curve.counts.tolist() == [2, 2, 1]
