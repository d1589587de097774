def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives JupyterLab in a real (headless) Chromium; needs COURSE_BROWSER_TESTS=1")
