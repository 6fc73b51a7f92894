"""Training models: a word-level LSTM language model (:mod:`~biasbook.training.lstm`), continual
training of a pre-trained LM (:mod:`~biasbook.training.continual`) and text classifiers on a
pre-trained encoder (:mod:`~biasbook.training.classifiers`). Every trained model gets a
fingerprint (:func:`biasbook.models.fingerprint`) and is cached by content
(:mod:`biasbook.store`)."""
