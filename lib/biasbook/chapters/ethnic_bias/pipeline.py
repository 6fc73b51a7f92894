"""CB scores of a language model in one language: the chapter's pipeline, also used by the
mitigation notebook to measure bias before and after.

:func:`cb_scores` fills every (template, attribute) frame of a language file with every target,
scores the target slot with :func:`biasbook.scoring.slot_probabilities` and returns a
:class:`CBResult` holding the log-probabilities as ``[templates, attributes, targets]`` arrays.

- **Masked LMs** (the paper): ``p_tgt`` is the whole-word probability of the target in its
  masked slot, ``p_prior`` the same with the attribute's core masked too, by as many mask tokens
  as the attribute has in the sentence, and with the neutral article or particle where the filled
  sentence has one that agrees with the attribute (``mode="paper"``; :func:`data.frame`).
  ``mode="as-coded"`` follows the authors' ``bias_score.py``: every sub-token of the target is
  read at every target mask (the scoring engine's cross product); the attribute gets as many masks
  as its singular term has tokens on its own; the target is lower-cased and the template's fixed
  article kept; and where the attribute comes before the target, the prior is read where their
  ``find_mask_token(..., last=True)`` looks: from the second mask token of the sentence on, which
  is the target's slot only for a one-piece attribute (see the chapter).
- **Causal and encoder-decoder LMs**: ``p_tgt`` is the candidate-normalised probability of the
  whole sentence, and the prior marginalises the attribute over the attribute list
  (:func:`biasbook.metrics.cb.attribute_mean_prior`). The prior is computed from the same
  scores, for templates with the attribute before or after the target alike, and recomputed
  whenever :meth:`CBResult.subset` changes the attribute or target list.

Multi-token targets: a target of ``k`` tokens gets the product of its ``k`` token probabilities
(whole-word masking for masked LMs, the chain rule for causal LMs); its prior spans the same
``k`` tokens, so the length penalty cancels in ``P'``.

Results are cached by content (model fingerprint, sentences, mode) under
``cache_dir()/ethnic-bias-cb``; the sentence scores below them are cached by the scoring engine.

>>> from biasbook.models import from_model
>>> from biasbook.testing import tiny_model, tiny_tokenizer
>>> tok = tiny_tokenizer(spell=True)
>>> gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
>>> r = cb_scores(gpt, "en", targets=["Iraq", "Japan", "Cuba"], attributes=["Enemy", "Pirate"],
...               templates=[1, 5], cache=False)
>>> r.log_p_norm.shape, r.cb > 0
((2, 2, 3), True)
>>> r.scores.columns.tolist()
['template', 'attribute', 'target', 'term', 'log_p_target', 'log_p_prior', 'log_p_norm']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from biasbook import store, validate
from biasbook.chapters.ethnic_bias import data, languages
from biasbook.metrics import cb
from biasbook.models import LanguageModel
from biasbook.scoring import slot_probabilities
from biasbook.scoring.spans import tokens_in_span

#: Bump when the computation of cached arrays changes.
VERSION = 2


@dataclass(frozen=True)
class CBResult:
    """Log-probabilities of one model in one language, and the CB score derived from them.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, book/class/ethnic-bias,
        book/trust.

    ``log_p_target`` and ``masked_prior`` are ``[templates, attributes, targets]`` arrays, in the
    order of ``templates`` (ids), ``attributes`` and ``targets`` (English keys). ``masked_prior``
    is None for causal and encoder-decoder models, whose prior is the attribute mean.
    ``word_lists``: whose templates and words were scored (:data:`data.WORD_LISTS`).
    """

    language: str
    model: str
    kind: str
    mode: str
    ddof: int
    templates: tuple[int, ...]
    attributes: tuple[str, ...]
    targets: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]  # per template: the strings filling the target slot
    log_p_target: np.ndarray
    masked_prior: np.ndarray | None
    word_lists: str = "authors"

    @property
    def log_p_prior(self) -> np.ndarray:
        """``log p_prior`` as a ``[templates, attributes, targets]`` array."""
        if self.masked_prior is not None:
            return self.masked_prior
        return np.broadcast_to(cb.attribute_mean_prior(self.log_p_target),
                               self.log_p_target.shape)

    @property
    def log_p_norm(self) -> np.ndarray:
        """``log P'`` as a ``[templates, attributes, targets]`` array."""
        return cb.normalized_log_probability(self.log_p_target, self.log_p_prior)

    @property
    def cb(self) -> float:
        """The CB score (variance with this result's ``ddof``)."""
        return cb.categorical_bias(self.log_p_norm, ddof=self.ddof)

    @property
    def variances(self) -> pd.DataFrame:
        """``Var_n log P'`` per (template, attribute): columns template, attribute, variance."""
        v = cb.target_variances(self.log_p_norm, ddof=self.ddof)
        index = pd.MultiIndex.from_product([self.templates, self.attributes],
                                           names=["template", "attribute"])
        return pd.DataFrame({"variance": v.ravel()}, index=index).reset_index()

    @property
    def scores(self) -> pd.DataFrame:
        """One row per (template, attribute, target) with its log-probabilities."""
        t, a, n = (len(self.templates), len(self.attributes), len(self.targets))
        return pd.DataFrame({
            "template": np.repeat(self.templates, a * n),
            "attribute": np.tile(np.repeat(self.attributes, n), t),
            "target": np.tile(self.targets, t * a),
            "term": np.concatenate([np.tile(terms, a) for terms in self.terms]),
            "log_p_target": self.log_p_target.ravel(),
            "log_p_prior": self.log_p_prior.ravel(),
            "log_p_norm": self.log_p_norm.ravel()})

    def distribution(self, attribute: str, template: int) -> pd.Series:
        """``P'`` over targets scaled to sum 1 (the paper's Figures 1, 3, 5), by target key."""
        p = cb.scaled_probabilities(self.log_p_norm[self.templates.index(template),
                                                    self.attributes.index(attribute)])
        return pd.Series(p, index=list(self.targets), name=f"{self.language}")

    def subset(self, *, targets: Sequence[str] | None = None,
               attributes: Sequence[str] | None = None,
               templates: Sequence[int] | None = None) -> CBResult:
        """The same scores restricted to some targets, attributes or templates (Table 7).

        ``templates`` are English ids, as in :func:`cb_scores` (Chinese reads 7 as its 1).
        A causal model's prior is recomputed over the kept attributes and targets.
        """
        def pick(name, wanted, have):
            if wanted is None:
                return list(range(len(have)))
            wanted = list(wanted)
            missing = [w for w in wanted if w not in have]
            if missing:
                raise KeyError(f"{name} {missing} are not in this result ({list(have)})")
            return [have.index(w) for w in wanted]

        if templates is not None:
            templates = data.template_ids(data.language(self.language, self.word_lists),
                                          templates)
        ti = pick("templates", templates, self.templates)
        ai = pick("attributes", attributes, self.attributes)
        ni = pick("targets", targets, self.targets)
        grid = np.ix_(ti, ai, ni)
        return replace(self, templates=tuple(self.templates[i] for i in ti),
                       attributes=tuple(self.attributes[i] for i in ai),
                       targets=tuple(self.targets[i] for i in ni),
                       terms=tuple(tuple(self.terms[i][j] for j in ni) for i in ti),
                       log_p_target=self.log_p_target[grid],
                       masked_prior=None if self.masked_prior is None
                       else self.masked_prior[grid])


def cb_scores(lm: LanguageModel, language: str | languages.Language, *,
              targets: Sequence[str] | None = None,
              attributes: Sequence[str] | None = None, templates: Sequence[int] | None = None,
              mode: str = "paper", ddof: int = 1, word_lists: str = "authors",
              cache: bool = True, progress: bool | None = None) -> CBResult:
    """Score ``lm`` on the templates of ``language`` (a code of :data:`languages.LANGUAGES`) from
    ``word_lists``: ``authors`` (their published lists) or ``book`` (the book's translations).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, book/class/ethnic-bias,
        book/trust.

    ``targets`` and ``attributes`` are English keys (default: the 30 targets and 70 attributes
    of Appendix A.2; :func:`data.target_keys` / :func:`data.attribute_keys` with ``extra=True``
    add the five additional ones); ``templates`` are English template ids (default: all of the
    language's; an id the language lacks becomes the template that reads the same there, see
    :func:`data.template_ids`). ``mode`` is ``paper`` or ``as-coded`` (masked LMs only);
    ``ddof`` the variance's delta degrees of freedom (1: the sample variance, as the authors'
    code). ``language`` may also be a :class:`languages.Language` itself (e.g. with reworded
    templates: :mod:`.sensitivity`); ``word_lists`` is then its own.
    """
    lang = (language if isinstance(language, languages.Language)
            else data.language(language, word_lists))
    validate.choice("mode", mode, validate.MODES)
    if mode == "as-coded" and lm.kind != "masked":
        raise ValueError("mode='as-coded' reproduces the authors' masked-LM code; "
                         f"{lm.name} is a {lm.kind} model")
    targets = _keys("targets", targets, data.target_keys(), lang.targets)
    attributes = _keys("attributes", attributes, data.attribute_keys(), lang.attributes)
    if templates is not None and not list(templates):
        raise ValueError("templates is empty: give at least one id, or None for all")
    templates = data.template_ids(lang, None if templates is None else list(templates))
    if len(targets) <= ddof:
        raise ValueError(f"the variance with ddof={ddof} needs more than {ddof} targets")
    terms = [data.target_terms(lang, t, targets, mode) for t in templates]
    frames = [[data.frame(lang, t, a, mode) for a in attributes] for t in templates]
    key = store.content_key(VERSION, lm.fingerprint, lm.kind, mode, terms,
                            [[(f.text, f.start, f.end, f.masked("{mask}")) for f in row]
                             for row in frames])

    def compute() -> dict[str, np.ndarray]:
        target = _slot_logprobs(lm, [[f.text for f in row] for row in frames], terms, mode,
                                cache, progress)
        if lm.kind != "masked":
            return {"log_p_target": target}
        mask = lm.tokenizer.mask_token
        priors = [[f.masked(" ".join([mask] * _mask_count(lm, lang, f, a, term[0], mode)))
                   for f, a in zip(row, attributes, strict=True)]
                  for row, term in zip(frames, terms, strict=True)]
        # The authors' find_mask_token(..., last=True) on the prior: attribute before target.
        last = [mode == "as-coded" and row[0].start < row[0].text.index("{}") for row in frames]
        return {"log_p_target": target,
                "log_p_prior": _slot_logprobs(lm, priors, terms, mode, cache, progress, last)}

    arrays = store.cached_arrays("ethnic-bias-cb", key, compute, cache=cache)
    return CBResult(language=lang.code, model=lm.name, kind=lm.kind, mode=mode, ddof=ddof,
                    templates=tuple(templates), attributes=tuple(attributes),
                    targets=tuple(targets), terms=tuple(tuple(t) for t in terms),
                    log_p_target=arrays["log_p_target"],
                    masked_prior=arrays.get("log_p_prior"), word_lists=lang.word_lists)


def _keys(name: str, given, default: list[str], known: dict) -> list[str]:
    keys = default if given is None else validate.word_list(name, given)
    missing = [k for k in keys if k not in known]
    if missing:
        raise KeyError(f"{name} {missing} are not keys of the language file (English keys, "
                       f"e.g. {list(known)[:3]})")
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name} must be distinct")
    return list(keys)


def _slot_logprobs(lm: LanguageModel, texts: list[list[str]], terms: list[list[str]], mode: str,
                   cache: bool, progress: bool | None, last: list[bool] | None = None
                   ) -> np.ndarray:
    """``[templates, attributes, targets]`` log slot probabilities, one engine call per set of
    target strings (templates asking for the same target form share it) and ``last`` flag
    (per template: read from the second mask on, :func:`slot_probabilities`'
    ``skip_first_mask``)."""
    last = last or [False] * len(texts)
    groups: dict[tuple[tuple[str, ...], bool], list[int]] = defaultdict(list)
    for i, term in enumerate(terms):
        groups[(tuple(term), last[i])].append(i)
    out = np.empty((len(texts), len(texts[0]), len(terms[0])))
    for (term, skip), rows in groups.items():
        flat = [text for i in rows for text in texts[i]]
        unique = list(dict.fromkeys(flat))
        logp = slot_probabilities(lm, unique, list(term), mode=mode, log=True, cache=cache,
                                  progress=progress, skip_first_mask=skip)
        where = {text: k for k, text in enumerate(unique)}
        out[rows] = logp[[where[t] for t in flat]].reshape(len(rows), len(texts[0]), -1)
    return out


def _mask_count(lm: LanguageModel, lang: languages.Language, frame: data.Frame, attribute: str,
                term: str, mode: str) -> int:
    """How many mask tokens replace the attribute in the prior sentence.

    ``paper``: the tokens of the filled sentence that overlap the attribute's core. ``as-coded``:
    the tokens of the attribute's singular term on its own (``len(tokenizer.tokenize(attr))``).
    """
    if mode == "as-coded":
        return len(lm.tokenizer.tokenize(lang.attributes[attribute]["term"]))
    slot = frame.text.index("{}")
    shift = len(term) - 2 if slot < frame.start else 0
    start, end = frame.start + shift, frame.end + shift
    encoded = lm.tokenizer(frame.text.replace("{}", term), return_offsets_mapping=True,
                           return_special_tokens_mask=True)
    count = len(tokens_in_span(encoded["offset_mapping"], start, end,
                               encoded["special_tokens_mask"]))
    if count == 0:
        raise ValueError(f"{lm.name}: attribute {attribute!r} has no tokens in "
                         f"{frame.text!r}")
    return count


def target_token_counts(lm: LanguageModel, language: str, template: int,
                        targets: Sequence[str] | None = None, word_lists: str = "authors"
                        ) -> pd.Series:
    """How many tokens each target takes in the slot of ``template`` (filled with the first
    attribute), by English key: the ``k`` of the multi-token rule.

    Used in: ethnic-bias/01, ethnic-bias/02.
    """
    lang = data.language(language, word_lists)
    template = data.template_ids(lang, [template])[0]
    targets = _keys("targets", targets, data.target_keys(extra=True), lang.targets)
    text = data.frame(lang, template, next(iter(lang.attributes))).text
    start = text.index("{}")
    counts = {}
    for key, term in zip(targets, data.target_terms(lang, template, targets), strict=True):
        offsets = lm.tokenizer(text.replace("{}", term), return_offsets_mapping=True,
                               add_special_tokens=False)["offset_mapping"]
        counts[key] = len(tokens_in_span(offsets, start, start + len(term)))
    return pd.Series(counts, name="tokens")
