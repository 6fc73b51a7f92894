"""Chat prompts for the chapter's local models, as the text a model is given.

A model whose tokenizer has a chat template (SmolLM2-135M-Instruct) gets the messages through it,
with the generation prompt appended, so that it answers as its instruction tuning taught it
(without the template an instruct model writes run-on text). A model without one (the registry's
Gemma-3-270M is the *pretrained* checkpoint, not the instruction-tuned one, and ships no template)
gets a plain completion prompt: its beginning-of-sequence token, the system text, every user
message, every assistant message after ``cue``, and ``cue`` at the end for the answer.

>>> class Plain:
...     chat_template, bos_token = None, "<bos>"
>>> render(Plain(), [{"role": "system", "content": "Be brief."},
...                  {"role": "user", "content": "Name a fruit."},
...                  {"role": "assistant", "content": "Apple"},
...                  {"role": "user", "content": "Name a colour."}], cue="Answer:")
'<bos>Be brief.\\n\\nName a fruit.\\nAnswer: Apple\\n\\nName a colour.\\nAnswer:'
"""

from __future__ import annotations

from collections.abc import Sequence


def render(tokenizer, messages: Sequence[dict], *, cue: str) -> str:
    """``messages`` (dicts with ``role`` and ``content``) as one prompt string for ``tokenizer``'s
    model; the result is tokenized without adding special tokens.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(list(messages), tokenize=False,
                                             add_generation_prompt=True)
    parts = []
    for message in messages:
        if message["role"] == "assistant":
            parts[-1] += f"\n{cue} {message['content']}"
        else:
            parts.append(message["content"])
    return (getattr(tokenizer, "bos_token", None) or "") + "\n\n".join(parts) + f"\n{cue}"
