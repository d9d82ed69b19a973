"""The record set of a fit on Spark: the partitions in the tasks of one barrier job.

:class:`SparkRecords` is the record set (``_records.RecordSet``) that ``dpboost.spark``'s
estimators fit over; this module holds both of its sides: the driver's (start the job, number
the records, send the public decisions, add the tasks' sums in partition order) and the task's
(:class:`_Serve`: load the partition, apply the decisions, return the statistics asked). Nothing
but each task's number of records and its sums reaches the driver; every noisy release is made
from the sums by the caller (``_boosting``), once.

How a DataFrame's columns become a task's partition (``load``) is ``_spark_columns``'s; the
SparkML estimators are ``dpboost.spark``'s.
"""

import queue
import secrets
import socket
import threading
import traceback
from dataclasses import dataclass, replace
from multiprocessing.connection import Client, Listener
from multiprocessing.context import AuthenticationError

import numpy as np
from pyspark import BarrierTaskContext, InheritableThread, cloudpickle

from ._records import RecordSet, Step, add_sums


class SparkRecords(RecordSet):
    """A record set (``_records``) whose partitions live in the tasks of one Spark job.

    Nothing runs until the first :meth:`reduce`: then one job starts in barrier mode, each of
    its tasks loads its partition (``load``), connects to the driver (a listener authenticated
    by a key drawn for the fit) and says how many records it holds; the driver numbers the
    records across tasks in partition order and from then on sends each task the queued public
    decisions and the statistic to sum. :meth:`close` ends the job.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The records' columns, in their order (the rows of their coins); its partitions are
        joined into at most as many as the cluster has task slots (barrier mode runs every
        task at once), neighbours with neighbours.
    load : callable
        ``load(batches, n_threads)``: a task's iterator of ``pyarrow.RecordBatch`` as a
        :class:`~dpboost._records.Partition` whose records are numbered from 0.
    description : str
        The job's description in Spark's UI.
    """

    def __init__(self, frame, load, description):
        self._frame, self._load, self._description = frame, load, description
        self._pending = []
        self._log = []  # every decision sent: what the tasks of a stage run again replay
        self._tasks = None  # the connections in partition order, once the job runs
        self._seen = {}  # partition -> (task attempt, records) of its latest task
        self._job = self._failure = self._listener = None
        self._closing = False

    def update(self, function, *args):
        """Queue ``function(partition, *args)`` for every partition (sent with the next
        :meth:`reduce`)."""
        self._pending.append(Step(function, args))

    def reduce(self, function, *args):
        """``function(partition, *args)`` of every task's partition, after the queued
        decisions, added on the driver in partition order.

        Returns
        -------
        total : ndarray, dtype=float64
        """
        if self._tasks is None:
            self._start()
        steps, self._pending = tuple(self._pending), []
        self._log.extend(steps)
        statistic = Step(function, args)
        message = ("run", steps, statistic)
        while True:
            try:
                return add_sums(self._exchange(message))
            except (EOFError, OSError):
                # A task is gone: Spark runs the stage again; its new tasks replay the log
                # (which holds ``steps``), then the statistic is asked again.
                message = ("run", (), statistic)
            self._connect()

    def number_rows(self):
        """Nothing to do: each task numbers its records when it starts, from every task's
        number of records (known to the driver before any statistic)."""

    def close(self, cancel=False):
        """End the job: tell the tasks to stop (``cancel``: cancel the job as well, after a
        failed fit) and wait for it."""
        if self._job is None:
            return
        for connection in self._tasks or ():
            try:
                connection.send_bytes(cloudpickle.dumps(("stop",)))
            except OSError:
                pass  # a task already gone
            connection.close()
        self._closing = True
        # Wakes the listener's thread, which then sees ``_closing``.
        Client(self._address, authkey=self._key).close()
        self._listener.close()
        if cancel:
            self._frame.sparkSession.sparkContext.cancelJobGroup(self._group)
        self._job.join()
        self._job = None

    def _start(self):
        context = self._frame.sparkSession.sparkContext
        conf = context.getConf()
        # Counted here, at the first statistic, not when the fit starts: with adaptive query
        # execution the partitions of a DataFrame after a shuffle are known only once the
        # shuffle has run, and no record is read before every check of the fit has passed.
        frame = self._frame
        n_partitions = frame.rdd.getNumPartitions()
        # Barrier mode runs every task at once: no more partitions than task slots. coalesce
        # joins neighbouring partitions, keeping the records' order (their coins' rows).
        slots = max(1, context.defaultParallelism // int(conf.get("spark.task.cpus", "1")))
        if n_partitions > slots:
            frame = frame.coalesce(slots)
        elif n_partitions == 0:
            frame = frame.repartition(1)
        # The checkpoint: what a task run again reads (the same records, in the same order,
        # whatever the DataFrame's plan), and a barrier stage's input, which must have as many
        # partitions as each RDD before it in the stage (no union or coalesce).
        frame = frame.localCheckpoint()
        host = conf.get("spark.driver.host")
        self._key = secrets.token_bytes(32)
        self._listener = Listener((conf.get("spark.driver.bindAddress", host), 0),
                                  authkey=self._key)
        self._address = (host, self._listener.address[1])
        self._arrivals = queue.Queue()
        self._group = f"dpboost-{secrets.token_hex(8)}"
        threading.Thread(target=self._accept, daemon=True).start()
        serve = _Serve(self._address, self._key, self._load)
        # A barrier stage that is not the job's last (the shuffle after it) is one Spark runs
        # again when one of its tasks fails; a failed barrier result stage ends the job.
        job = frame.mapInArrow(serve, "task long", barrier=True).repartition(1)
        self._job = InheritableThread(target=self._run, args=(context, job), daemon=True)
        self._job.start()
        self._connect()

    def _run(self, context, job):
        context.setJobGroup(self._group, self._description, interruptOnCancel=True)
        try:
            # The noop sink: the job runs, nothing comes back to Python.
            job.write.format("noop").mode("overwrite").save()
        except Exception as error:  # raised on the driver's thread by _connect
            self._failure = error
        self._arrivals.put(None)

    def _accept(self):
        while True:
            try:
                connection = self._listener.accept()
            except AuthenticationError:
                continue  # not one of the fit's tasks
            except OSError:
                return
            if self._closing:
                connection.close()
                return
            _no_delay(connection)
            self._arrivals.put(connection)

    def _connect(self):
        """:meth:`_connect_once`, again for the stage's next attempt while a task is gone before
        it has its start (the job's failure ends it)."""
        while True:
            try:
                return self._connect_once()
            except (EOFError, OSError):
                continue

    def _connect_once(self):
        """Wait for one task per partition of the job's latest stage attempt, number the
        records and send each task its first row and the decisions so far."""
        for connection in self._tasks or ():
            connection.close()
        tasks, n_tasks = {}, None
        while n_tasks is None or len(tasks) < n_tasks:
            connection = self._arrivals.get()
            if connection is None:
                raise self._failure or RuntimeError("the Spark job of the fit ended early")
            try:
                index, attempt, n_tasks, n_records = cloudpickle.loads(connection.recv_bytes())
            except (EOFError, OSError):
                continue
            if attempt <= self._seen.get(index, (-1,))[0]:
                connection.close()  # a task of an attempt Spark has given up
                continue
            if index in tasks:
                tasks[index].close()
            tasks[index] = connection
            self._seen[index] = (attempt, n_records)
        counts = [self._seen[i][1] for i in range(n_tasks)]
        first_rows = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        log = tuple(self._log)
        self._tasks = [tasks[i] for i in range(n_tasks)]
        for connection, first_row in zip(self._tasks, first_rows):
            connection.send_bytes(cloudpickle.dumps(("start", int(first_row), log)))

    def _exchange(self, message):
        payload = cloudpickle.dumps(message)
        for connection in self._tasks:
            connection.send_bytes(payload)
        replies = [cloudpickle.loads(connection.recv_bytes()) for connection in self._tasks]
        for kind, value, remote in replies:
            if kind == "error":
                raise value from RemoteTraceback(remote)
        return [value for _, value, _ in replies]


class RemoteTraceback(Exception):
    """The traceback of an error raised in a Spark task, as text (the cause of the error
    re-raised on the driver)."""


def _apply(partition, steps):
    for step in steps:
        partition = step(partition)
    return partition


@dataclass(frozen=True)
class _Serve:
    """A task of the fit's job (``mapInArrow``): load the partition, then serve the driver."""

    address: tuple
    key: bytes
    load: object

    def __call__(self, batches):
        context = BarrierTaskContext.get()
        partition = self.load(batches, context.cpus())
        hello = (context.partitionId(), context.taskAttemptId(), len(context.getTaskInfos()),
                 partition.y_rows.shape[1])
        with Client(self.address, authkey=self.key) as connection:
            _no_delay(connection)
            connection.send_bytes(cloudpickle.dumps(hello))
            _, first_row, log = cloudpickle.loads(connection.recv_bytes())
            partition = _apply(replace(partition, first_row=first_row), log)
            while True:
                message = cloudpickle.loads(connection.recv_bytes())
                if message[0] == "stop":
                    break
                _, steps, statistic = message
                try:
                    partition = _apply(partition, steps)
                    reply = ("sum", np.asarray(statistic(partition), dtype=np.float64), None)
                except Exception as error:  # raised on the driver, which ends the fit
                    reply = ("error", error, traceback.format_exc())
                connection.send_bytes(_dumps_reply(reply))
        yield from ()


def _no_delay(connection):
    """Turn Nagle's algorithm off on ``connection``'s socket: a message whose header and body
    go out in two writes otherwise waits for the peer's delayed acknowledgement (tens of
    milliseconds) at every statistic."""
    with socket.socket(fileno=socket.dup(connection.fileno())) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _dumps_reply(reply):
    try:
        return cloudpickle.dumps(reply)
    except Exception:  # an exception that does not pickle: its text
        return cloudpickle.dumps(("error", RuntimeError(repr(reply[1])), reply[2]))

