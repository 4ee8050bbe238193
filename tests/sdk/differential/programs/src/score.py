"""Entry script of the differential programs' parallel steps (never run by the test)."""


def init():
    pass


def run(mini_batch):
    return mini_batch
