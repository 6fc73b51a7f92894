"""One sub-package per chapter of the book: that paper's pipeline (its data, runs, tables).

A chapter package may import anything in :mod:`biasbook`; nothing in :mod:`biasbook` imports a
chapter package (a test checks this), and every ``notebooks/<chapter>/`` folder has its
``chapters/<chapter>/`` package (hyphens become underscores)."""
