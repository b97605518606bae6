"""tests/hub/: the course on a real JupyterHub (hub.py) and what Binder would build.

Select or deselect these tests with `-m hub` / `-m "not hub"`."""


def pytest_configure(config):
    config.addinivalue_line("markers", "hub: runs a real JupyterHub on this machine (tests/hub/hub.py)")
