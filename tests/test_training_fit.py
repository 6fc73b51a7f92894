"""The one training loop (biasbook.training.fit): an interrupted run resumes to the weights of an
uninterrupted one, bit for bit; a seed determines the run; progress is shown."""

import numpy as np
import pytest
import torch

from biasbook import store
from biasbook.training.fit import fit, saved_epoch, seeded, shuffled

X = torch.randn(24, 3, generator=torch.Generator().manual_seed(0))
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]])


class Interrupted(Exception):
    pass


def train(seed=0, epochs=4, checkpoint=None, crash_at=None, progress=False, **kw):
    """A small network with dropout, Adam and a decaying rate, shuffled by one numpy generator
    over all epochs: every kind of state that fit must carry across an interruption."""
    seeded(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.3),
                                torch.nn.Linear(8, 1))
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)
    schedule = torch.optim.lr_scheduler.LinearLR(optimiser, 1.0, 0.1, total_iters=epochs * 5)
    rng = np.random.default_rng(seed)
    steps = []

    def step(batch):
        if len(steps) == crash_at:
            raise Interrupted
        steps.append(batch)
        loss = torch.nn.functional.mse_loss(model(X[batch]), Y[batch])
        loss.backward()
        return loss.item()

    history = fit(model, step, lambda epoch: shuffled(len(X), 5, rng), epochs=epochs,
                  optimiser=optimiser, schedule=schedule, max_grad_norm=1.0, rngs=[rng],
                  checkpoint=checkpoint, progress=progress, **kw)
    return model, history, torch.rand(2)  # the last: where torch's generator was left


def assert_same(run, other):
    (model, history, after), (model2, history2, after2) = run, other
    assert history == history2 and torch.equal(after, after2)
    for key, value in model.state_dict().items():
        assert torch.equal(value, model2.state_dict()[key]), key


def test_a_seed_determines_the_run():
    assert_same(train(seed=3), train(seed=3))
    assert not torch.equal(train(seed=3)[0][0].weight, train(seed=4)[0][0].weight)


@pytest.mark.parametrize("crash_at", [7, 11, 19])  # a step in epochs 2, 3 and 4
def test_a_resumed_run_ends_as_an_uninterrupted_one(tmp_path, crash_at):
    whole = train(checkpoint=store.Checkpoint(tmp_path / "whole"))
    checkpoint = store.Checkpoint(tmp_path / "run")
    with pytest.raises(Interrupted):
        train(checkpoint=checkpoint, crash_at=crash_at)
    assert saved_epoch(checkpoint) == crash_at // 5  # 5 steps per epoch
    assert_same(train(checkpoint=checkpoint), whole)
    assert saved_epoch(checkpoint) == 4


def test_a_finished_run_trains_no_more_and_refuses_fewer_epochs(tmp_path):
    checkpoint = store.Checkpoint(tmp_path / "run")
    whole = train(checkpoint=checkpoint)
    assert_same(train(checkpoint=checkpoint, crash_at=0), whole)  # no step taken
    with pytest.raises(ValueError, match="epoch 4, past the 2 asked for"):
        train(checkpoint=checkpoint, epochs=2)
    assert_same(train(checkpoint=checkpoint, resume=False, epochs=2), train(epochs=2))


def test_records_come_from_end_epoch_in_eval_mode():
    modes = []

    def record(epoch, outputs):
        modes.append(model.training)
        return {"epoch": epoch, "steps": len(outputs)}

    model = torch.nn.Linear(3, 1)
    history = fit(model, lambda batch: model(X[batch]).sum().backward(),
                  lambda epoch: [[0, 1]] * epoch, epochs=3, end_epoch=record,
                  optimiser=torch.optim.SGD(model.parameters(), lr=0.1), progress=False)
    assert history == [{"epoch": k, "steps": k} for k in (1, 2, 3)] and modes == [False] * 3


def test_progress_bars_show_the_epochs_and_steps(capsys):
    train(epochs=2, progress=True, desc="tiny regression")
    err = capsys.readouterr().err
    assert "tiny regression" in err and "2/2" in err and "steps" in err
    train(epochs=2)
    assert capsys.readouterr().err == ""
