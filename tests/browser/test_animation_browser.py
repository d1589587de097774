"""``animate``'s player in a real browser: it plays once when shown, and its button replays."""

import numpy as np

from course_utils.animation import animate


def test_the_player_plays_its_frames_once_then_replays_on_its_button(browser):
    frames = [np.full((40, 60, 3), 40 * i, dtype=np.uint8) for i in range(5)]
    page = browser.new_page()
    try:
        page.set_content(f"<html><body>{animate(frames, fps=20, title='an episode').data}</body></html>")
        label = page.locator("[id$='-label']")
        page.wait_for_function("document.querySelector(\"[id$='-label']\").textContent === 'frame 5/5'", timeout=5000)
        assert page.locator("[id$='-button']").text_content() == "play"  # stopped at the end
        first = page.locator("[id$='-img']").get_attribute("src")
        # every label the replay shows, recorded as it changes
        page.evaluate("""() => { window.seen = []; const label = document.querySelector("[id$='-label']");
            new MutationObserver(() => window.seen.push(label.textContent)).observe(label, {childList: true}); }""")
        page.locator("[id$='-button']").click()
        page.wait_for_function("window.seen.length > 0 && window.seen[window.seen.length - 1] === 'frame 5/5'", timeout=5000)
        assert page.evaluate("window.seen")[0] == "frame 1/5" and page.locator("text=an episode").count() == 1
        page.locator("[id$='-slider']").fill("1")
        assert label.text_content() == "frame 2/5" and page.locator("[id$='-img']").get_attribute("src") != first
    finally:
        page.close()
