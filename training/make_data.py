#!/usr/bin/env python3
"""Generate the arithmetic word problems that libreset's own small reasoning model learns.

Each problem is a short story: a person starts with some items, two to four
events change the count (buy / lose / multiply / split equally), and one to
three distractor sentences mention numbers that must be ignored (another
person's items of the same kind, or the same person's items of another kind).
All intermediate counts stay within 0..9999 (at most four digits).

The solution is written for a model of about 8M parameters:
  * every step is its own paragraph (steps are separated by blank lines, which
    is what ReSET's step delimiter "\\n\\n" sees);
  * additions and subtractions are written "a + b = c" (four-digit operands at
    most: a small transformer learns that in plain digit order when digits are
    single tokens);
  * multiplication is only ever by one digit, written as explicit partial
    products per digit of the multiplicand and then summed pairwise, so no
    step needs more than a one-digit product or a plain addition;
  * division is only ever by one digit and exact, written as long division one
    digit at a time ("13 / 4 = 3 r 1"), so each step is a times-table fact;
  * the running count is repeated at the start of every step.
The answer line after </think> is "The answer is \\boxed{N}."

Splits use different seeds and are kept disjoint by problem text (train is
generated last and drops anything already in an evaluation split).

    python3 training/make_data.py --out training/data            # test/validation/calibration JSONL
    python3 training/make_data.py --out DIR --train 600000       # also train.jsonl (big; not committed)

Pure Python, deterministic for a given seed.
"""
import argparse
import json
import os
import random

# Seeds of the splits; any change here changes the data, so the model card records them.
SEEDS = {"test": 1001, "validation": 2002, "calibration": 3003, "train": 4004}
SIZES = {"test": 2000, "validation": 500, "calibration": 50}
MAX_VALUE = 9999

NAMES = ["Mia", "Leo", "Ava", "Noah", "Emma", "Liam", "Zoe", "Omar", "Lena", "Ravi", "Sara", "Ivan", "Nina",
         "Tom", "Yuki", "Ben", "Maya", "Finn", "Ella", "Sam", "Kai", "Rosa", "Hugo", "Iris"]
ITEMS = ["stickers", "marbles", "apples", "coins", "stamps", "books", "pencils", "shells", "cards", "beads",
         "cookies", "buttons", "seeds", "bricks", "candles", "tickets"]


def gen_value(rng, low, high):
    """A number with a spread of digit lengths, so short and long operands both appear."""
    digits = rng.randint(len(str(low)), len(str(high)))
    lo, hi = max(low, 10 ** (digits - 1) if digits > 1 else low), min(high, 10 ** digits - 1)
    if lo > hi:
        lo, hi = low, high
    return rng.randint(lo, hi)


def add_step(a, b):
    return f"{a} + {b} = {a + b}"


def sub_step(a, b):
    return f"{a} - {b} = {a - b}"


def mul_steps(a, d):
    """a * d with d one digit: one partial product per nonzero digit of a, then pairwise sums."""
    digits = str(a)
    parts = []
    for i, ch in enumerate(digits):
        place = 10 ** (len(digits) - 1 - i)
        if ch != "0":
            parts.append((int(ch) * place, int(ch) * place * d))
    lines = [f"{p} * {d} = {q}" for p, q in reversed(parts)]  # units first, as written by hand
    total = parts[-1][1]
    sums = []
    for _, q in reversed(parts[:-1]):
        sums.append(f"{total} + {q} = {total + q}")
        total += q
    text = f"{a} * {d}: " + ", ".join(lines)
    if sums:
        text += ". Then " + ", ".join(sums)
    return text + f". So {a} * {d} = {a * d}", a * d


def div_steps(a, d):
    """Exact a / d with d one digit, as long division one digit at a time."""
    rest, quotient, parts = 0, "", []
    for ch in str(a):
        cur = rest * 10 + int(ch)
        q, rest = divmod(cur, d)
        quotient += str(q)
        parts.append(f"{cur} / {d} = {q} r {rest}")
    assert rest == 0
    return f"{a} / {d}: " + ", ".join(parts) + f". So {a} / {d} = {a // d}", a // d


def make_problem(rng):
    name, other = rng.sample(NAMES, 2)
    item, other_item = rng.sample(ITEMS, 2)
    value = gen_value(rng, 2, 3000)
    story = [f"{name} has {value} {item}."]
    steps = [f"{name} starts with {value} {item}."]
    distractors = [
        lambda: f"{other} has {gen_value(rng, 2, 9999)} {item}.",
        lambda: f"{name} also has {gen_value(rng, 2, 9999)} {other_item}.",
        lambda: f"{other} gives {gen_value(rng, 2, 999)} {other_item} to a neighbour.",
        lambda: f"A shop nearby sells {item} in packs of {rng.randint(2, 99)}.",
        lambda: f"{other} is {rng.randint(6, 80)} years old.",
    ]
    n_events, n_distract = rng.randint(2, 4), rng.randint(1, 3)
    slots = ["e"] * n_events + ["d"] * n_distract
    # Events keep their order; distractors are spread between them.
    rng.shuffle(slots)
    for slot in slots:
        if slot == "d":
            story.append(rng.choice(distractors)())
            continue
        ops = ["add", "sub", "mul", "div"]
        weights = [3, 3, 2, 2]
        divisors = [d for d in range(2, 10) if value % d == 0 and value // d >= 1]
        if not divisors:
            weights[3] = 0
        if value * 2 > MAX_VALUE:
            weights[2] = 0
        if value < 2:
            weights[1] = 0
        if value >= MAX_VALUE - 1:
            weights[0] = 0
        op = rng.choices(ops, weights)[0]
        if op == "add":
            b = gen_value(rng, 1, min(5000, MAX_VALUE - value))
            story.append(rng.choice([f"Then {name} buys {b} more {item}.", f"{name} finds {b} more {item}.",
                                     f"A friend gives {name} {b} {item}."]))
            steps.append(f"{name} gets {b} more: {add_step(value, b)}. Now {name} has {value + b}.")
            value += b
        elif op == "sub":
            b = gen_value(rng, 1, value - 1 if value > 1 else 1)
            story.append(rng.choice([f"Then {name} gives away {b} {item}.", f"{name} loses {b} {item}.",
                                     f"{name} sells {b} {item}."]))
            steps.append(f"{name} loses {b}: {sub_step(value, b)}. Now {name} has {value - b}.")
            value -= b
        elif op == "mul":
            d = rng.randint(2, min(9, MAX_VALUE // value))
            story.append(rng.choice([f"Then the number of {item} {name} has becomes {d} times as large.",
                                     f"{name} ends up with {d} times as many {item}."]))
            text, new = mul_steps(value, d)
            steps.append(f"{name} has {d} times as many. {text}. Now {name} has {new}.")
            value = new
        else:
            d = rng.choice(divisors)
            story.append(rng.choice([f"Then {name} splits the {item} into {d} equal groups and keeps one group.",
                                     f"{name} shares the {item} equally among {d} people, {name} included, "
                                     f"and keeps one share."]))
            text, new = div_steps(value, d)
            steps.append(f"{name} keeps one of {d} equal parts. {text}. Now {name} has {new}.")
            value = new
    story.append(f"How many {item} does {name} have now?")
    steps.append(f"So {name} has {value} {item} at the end.")
    problem = " ".join(story)
    reasoning = "\n\n".join(steps)
    answer = f"The answer is \\boxed{{{value}}}."
    return {"problem": problem, "answer": str(value), "reasoning": reasoning, "final": answer}


def generate(seed, count, exclude=frozenset()):
    rng = random.Random(seed)
    seen, out = set(exclude), []
    while len(out) < count:
        p = make_problem(rng)
        if p["problem"] in seen:
            continue
        seen.add(p["problem"])
        out.append(p)
    return out


def _train_chunk(index):
    # Each chunk has its own seed derived from the train seed, so chunks can be
    # generated in parallel and the result does not depend on the worker count.
    return generate(SEEDS["train"] * 100000 + index, TRAIN_CHUNK)


TRAIN_CHUNK = 20000


def eval_splits():
    splits, used = {}, set()
    for name in ("test", "validation", "calibration"):
        splits[name] = generate(SEEDS[name], SIZES[name], frozenset(used))
        used.update(p["problem"] for p in splits[name])
    return splits, used


def train_split(n_train, exclude, workers=1):
    """n_train problems, none of whose text is in `exclude` or repeated; chunks are merged in order."""
    chunks = (n_train * 11 // 10) // TRAIN_CHUNK + 1  # ~10% spare for duplicates and excluded texts
    if workers > 1:
        import multiprocessing
        with multiprocessing.Pool(workers) as pool:
            parts = pool.map(_train_chunk, range(chunks))
    else:
        parts = [_train_chunk(i) for i in range(chunks)]
    seen, out = set(exclude), []
    for part in parts:
        for p in part:
            if p["problem"] not in seen:
                seen.add(p["problem"])
                out.append(p)
    if len(out) < n_train:
        raise RuntimeError(f"only {len(out)} distinct training problems; raise the chunk count")
    return out[:n_train]


def all_splits(n_train, workers=1):
    splits, used = eval_splits()
    if n_train:
        splits["train"] = train_split(n_train, used, workers)
    return splits


def write_jsonl(path, rows, full):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            row = r if full else {"problem": r["problem"], "answer": r["answer"]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    parser.add_argument("--train", type=int, default=0, help="also write train.jsonl with this many problems")
    parser.add_argument("--show", type=int, default=0, help="print this many training-style examples")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    splits = all_splits(args.train)
    for name, rows in splits.items():
        write_jsonl(os.path.join(args.out, f"{name}.jsonl"), rows, full=(name == "train"))
        print(f"{name}: {len(rows)} problems")
    for p in _train_chunk(0)[:args.show]:
        print(p["problem"], "\n<think>\n" + p["reasoning"] + "\n</think>\n\n" + p["final"], "\n" + "-" * 40)


if __name__ == "__main__":
    main()
