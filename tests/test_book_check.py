"""The built-book check finds the MathJax errors a browser would show, and stray delimiters."""

import shutil

import pytest

from biasbook import book_check

needs_mathjax = pytest.mark.skipif(
    shutil.which("node") is None or not (book_check.MATHJAX_DIR / "node-main.js").exists(),
    reason="needs Node.js and the MathJax copy that `make test` fetches")

BROKEN = r"""<html><body><h1>Eq</h1>
<div class="math notranslate nohighlight">\[\begin{split}a \\ b \tag{3}\end{split}\]</div>
<div class="math notranslate nohighlight">\[x \tag{4} \qquad y \tag{5}\]</div>
<div class="math notranslate nohighlight" id="e"><span class="eqno">(6)<a class="headerlink"
href="#e">#</a></span>\[\begin{equation}x \tag{6}\end{equation}\]</div>
<p>inline <span class="math notranslate nohighlight">\(x^2\)</span> and a stray $$z$$.</p>
</body></html>"""
FINE = r"""<html><body>
<div class="math notranslate nohighlight" id="e"><span class="eqno">(4)<a class="headerlink"
href="#e">#</a></span>\[\begin{equation}x\end{equation}\]</div>
<div class="math notranslate nohighlight">\[\begin{equation*}x \tag{4}\end{equation*}\]</div>
<div class="math notranslate nohighlight">\[\begin{split}a &amp;= b \\ c &amp;= d\end{split}\]</div>
<pre>$$ code is not math $$</pre>
</body></html>"""


@needs_mathjax
def test_a_page_with_mathjax_errors_fails_and_a_clean_one_passes(tmp_path):
    (tmp_path / "broken.html").write_text(BROKEN)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "fine.html").write_text(FINE)
    problems = book_check.check_pages(tmp_path)
    assert sorted((p.page, p.kind, p.detail) for p in problems) == [
        ("broken.html", "mathjax error", "Multiple \\tag"),
        ("broken.html", "mathjax error", "\\tag not allowed in split environment"),
        ("broken.html", "two equation numbers", "Sphinx's number and the \\tag both show"),
        ("broken.html", "unrendered math", "$$z$$"),
    ]
    assert book_check.main([str(tmp_path)]) == 1
    (tmp_path / "broken.html").unlink()
    assert book_check.main([str(tmp_path)]) == 0


def test_equations_are_read_without_their_delimiters():
    maths = book_check.page_math(FINE)
    assert [m.tex for m in maths] == [r"\begin{equation}x\end{equation}",
                                      r"\begin{equation*}x \tag{4}\end{equation*}",
                                      r"\begin{split}a &= b \\ c &= d\end{split}"]
    assert all(m.display for m in maths)
    assert [m.numbered for m in maths] == [True, False, False]


needs_browser = pytest.mark.skipif(
    shutil.which("chromium") is None or not (book_check.MATHJAX_DIR / "tex-chtml.js").exists(),
    reason="needs Debian's chromium and the MathJax copy that `make test` fetches")


@needs_browser
def test_the_browser_check_sees_what_a_reader_would(tmp_path):
    # as Sphinx configures MathJax: only elements of class "math" are typeset
    head = ("<html><head><script>window.MathJax = {options: {ignoreHtmlClass: 'document', "
            "processHtmlClass: 'math'}};</script>"
            f'<script src="{(book_check.MATHJAX_DIR / "tex-chtml.js").as_uri()}"></script>'
            '</head><body class="document">')
    (tmp_path / "ok.png").write_bytes(b"")  # exists: the check resolves files, not pixels
    (tmp_path / "broken.html").write_text(head + r"""
<div class="math notranslate nohighlight">\[a \tag{1} \tag{2}\]</div>
<div class="cell_output"><div class="output traceback"><pre>ValueError: boom</pre></div></div>
<img src="missing.png"><a href="nowhere.html">a link</a><p>stray $$x$$ math</p>
</body></html>""")
    (tmp_path / "fine.html").write_text(head + r"""
<div class="math notranslate nohighlight">\[a \tag{1}\]</div>
<div class="cell_output"><img src="ok.png"></div><a href="broken.html#top">back</a>
</body></html>""")
    broken = book_check.browser_problems(tmp_path / "broken.html", tmp_path, draws_figures=True)
    assert sorted(p.kind for p in broken) == ["broken link", "error output", "mathjax error",
                                               "missing image", "no figure", "unrendered math"]
    assert book_check.browser_problems(tmp_path / "fine.html", tmp_path, draws_figures=True) == []


def test_a_redirect_stub_is_checked_for_its_target_only(tmp_path):
    # Jupyter Book's root index.html: a browser shows book/intro.html, whose links are relative
    # to book/; reading them relative to the stub reported 43 false broken links.
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text("<html><body>intro</body></html>")
    stub = '<meta http-equiv="Refresh" content="0; url={}" />'
    (tmp_path / "index.html").write_text(stub.format("book/intro.html"))
    (tmp_path / "old.html").write_text(stub.format("book/gone.html"))
    assert book_check.browser_problems(tmp_path / "index.html", tmp_path) == []
    gone = book_check.browser_problems(tmp_path / "old.html", tmp_path)
    assert [(p.kind, p.detail) for p in gone] == [("broken redirect", "book/gone.html")]
