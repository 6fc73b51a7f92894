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


# What Sphinx 7.4 with MyST-NB 1.4 (dollarmath) renders of a markdown cell whose inline formula has
# a line starting with "- ": Markdown makes that line a list item, so neither half is typeset.
SPLIT_FORMULA = r"""<html><body><section class="tex2jax_ignore mathjax_ignore" id="eval">
<p><strong>WEAT</strong>. For target sets <span class="math notranslate nohighlight">\(\mathbb{X},
\mathbb{Y}\)</span> and attribute
sets <span class="math notranslate nohighlight">\(\mathbb{A},
\mathbb{B}\)</span>, with $s(w, A, B) = \operatorname{mean}_{a}\cos(w, a)</p>
<ul class="simple">
<li><p>\operatorname{mean}_{b}\cos(w, b)$,</p></li>
</ul>
</section></body></html>"""
# Everything that may hold TeX or "$" on a sound page: equations, code, outputs, scripts, amounts
SOUND = r"""<html><head><style>a::after { content: "\f101"; }</style>
<script>$(function () { return "\frac{a}{b}"; });</script></head><body>
<p>With <span class="math notranslate nohighlight">\(s(w, \mathbb{A}, \mathbb{B}) = x_{a}\)</span>,
a corpus costs $5 or US$1.50 to annotate; see <code class="docutils literal notranslate">
<span class="pre">$HOME\frac_{x}</span></code>.</p>
<div class="math notranslate nohighlight">
\[
d = \frac{\operatorname{mean}_{x} s(x)}{\operatorname{std}_{w} s(w)}
\]</div>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight"><pre><span></span>x = "$\\frac{a}{b}$"
</pre></div></div><div class="cell_output docutils container">
<div class="output stream"><div class="highlight"><pre><span></span>$\frac{a}{b}$
</pre></div></div>
<div class="output text_html"><table class="dataframe"><tr><th>cost</th><td>$12</td></tr></table>
</div>
<div class="output text_html"><table class="dataframe"><tr><th>sample</th>
<td>not firmed pressure $ N thus delivery &lt;unk&gt;</td></tr><tr><th>persona</th>
<td>given by their label.\nThis is a persona</td></tr></table>
</div></div></div>
</body></html>"""
# (the last table: what a full build printed, PTB's "$" token and a persona's escaped line break,
# which the check took for TeX before it left the data tables that cells print alone)


def test_tex_of_a_formula_that_markdown_split_is_reported_with_its_page(tmp_path, monkeypatch):
    # the equations themselves are sound: MathJax's verdict on them is the tests' above
    monkeypatch.setattr(book_check, "tex_errors", lambda equations: [None] * len(equations))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "03-evaluation.html").write_text(SPLIT_FORMULA)
    (tmp_path / "sound.html").write_text(SOUND)
    problems = book_check.check_pages(tmp_path)
    assert [(p.page, p.kind, p.detail) for p in problems] == [
        ("notebooks/03-evaluation.html", "TeX outside math",
         r"sets , with $s(w, A, B) = \operatorname{mean}_{a}\cos(w, a)"),
        ("notebooks/03-evaluation.html", "TeX outside math",
         r"\operatorname{mean}_{b}\cos(w, b)$,"),
    ]
    (tmp_path / "notebooks" / "03-evaluation.html").unlink()
    assert book_check.check_pages(tmp_path) == []


def test_each_kind_of_raw_tex_is_found_and_amounts_are_not():
    text = "a \\frac\nb \\(\nc x_{1}\nd x^{2}\ne $x\nf x$\ng $5, $1.50\nh $$z$$\ni plain"
    assert book_check.raw_tex(text) == ["a \\frac", "b \\(", "c x_{1}", "d x^{2}", "e $x", "f x$"]
    long = "word " * 40 + "\\mathbb{A}"
    assert book_check.raw_tex(long) == [long[len(long) - 10 - 40:]]


def test_a_markdown_table_printed_as_text_is_reported():
    """What MyST-NB's ``commonmark`` format made of ``display(Markdown(df.to_markdown()))``: the
    rows as one paragraph, the rule's dashes as em dashes. A rendered table is not reported."""
    raw = ('<div class="cell_output docutils container"><p>| name | licence |\n'
           '|:\u2014\u2014|:\u2014\u2014\u2013|\n| smollm2-135m | Apache-2.0 |</p></div>')
    assert book_check.raw_tables(raw) == ["| name | licence |"]
    table = ('<div class="cell_output docutils container"><table><tr><th>name</th></tr>'
             '</table><p>| not a table, one line |</p></div>')
    assert book_check.raw_tables(table) == []
