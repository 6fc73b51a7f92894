"""Training models with one loop, :func:`~biasbook.training.fit.fit`, resumable from a
:class:`~biasbook.store.Checkpoint`: a word-level LSTM language model
(:mod:`~biasbook.training.lstm`), continual training of a pre-trained LM
(:mod:`~biasbook.training.continual`), text classifiers on a pre-trained encoder
(:mod:`~biasbook.training.classifiers`), and the masked and causal language-modelling objectives
(:mod:`~biasbook.training.objectives`) that head-only fine-tuning
(:func:`biasbook.mitigation.alignment.finetune_head`) trains. Every trained model gets a
fingerprint (:func:`biasbook.models.fingerprint`) and is cached by content
(:mod:`biasbook.store`)."""
