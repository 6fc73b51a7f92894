"""One setting for the book's repository and launch buttons: ``repository.url`` in _config.yml.

Jupyter Book 1 passes ``repository.url`` to the theme as ``repository_url`` and the
``launch_buttons`` section as it is. With a URL, every notebook page gets the repository button
and the launch buttons configured in ``launch_buttons`` (Binder, Colab, a JupyterHub); without
one, Jupyter Book refuses ``use_repository_button`` and the theme cannot build a launch link, so
this extension switches both off instead of failing the build. The download button (the page's
``.ipynb`` and its source) is kept on every page in either case.
"""

from __future__ import annotations

LAUNCH_KEYS = ("binderhub_url", "colab_url", "jupyterhub_url", "thebe", "jupyterlite_url")


def buttons(theme_options: dict) -> dict:
    """The theme options with the buttons that ``repository_url`` allows.

    >>> launch = {"binderhub_url": "https://mybinder.org", "notebook_interface": "classic"}
    >>> off = buttons({"repository_url": "", "launch_buttons": launch})
    >>> off["use_repository_button"], "launch_buttons" in off, off["use_download_button"]
    (False, False, True)
    >>> on = buttons({"repository_url": "https://github.com/o/r", "launch_buttons": launch})
    >>> on["use_repository_button"], on["launch_buttons"]["binderhub_url"]
    (True, 'https://mybinder.org')
    """
    options = dict(theme_options)
    has_url = bool(str(options.get("repository_url") or "").strip())
    options["use_repository_button"] = has_url
    options["use_download_button"] = True
    if not has_url:
        options.pop("launch_buttons", None)
    return options


def _apply(app, config) -> None:
    config.html_theme_options = buttons(config.html_theme_options or {})


def setup(app):
    app.connect("config-inited", _apply)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
