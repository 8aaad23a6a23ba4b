"""The known-bad suite's scheduler: classes side by side, the disk-checking ones alone."""

import threading
import time
import unittest

from tests.testdata_suite import run_classes


class RunClassesTest(unittest.TestCase):
    def test_rows_keep_the_order_and_exclusive_items_run_alone(self):
        lock = threading.Lock()
        running, seen_with = set(), {}

        def grade(item):
            with lock:
                running.add(item)
                seen_with[item] = set(running)
            time.sleep(0.05)
            with lock:
                for other in running:
                    seen_with[other] |= set(running)
                running.discard(item)
            return [item]

        items = ["a", "writes", "b", "c", "d"]
        rows = run_classes(items, 3, lambda i: i == "writes", grade)
        self.assertEqual(rows, [[i] for i in items])
        self.assertEqual(seen_with["writes"], {"writes"})          # nothing beside it
        self.assertTrue(any(len(v) > 1 for k, v in seen_with.items() if k != "writes"), seen_with)

    def test_one_job_is_one_at_a_time(self):
        busy, peak = [0], [0]
        lock = threading.Lock()

        def grade(item):
            with lock:
                busy[0] += 1
                peak[0] = max(peak[0], busy[0])
            time.sleep(0.01)
            with lock:
                busy[0] -= 1
            return [item]

        self.assertEqual(run_classes(list("abcd"), 1, lambda i: False, grade), [[i] for i in "abcd"])
        self.assertEqual(peak[0], 1)


if __name__ == "__main__":
    unittest.main()
