"""Process sets: subsets of ranks that run collectives among themselves
(Horovod's hvd.ProcessSet). A set created before init gets its id at init;
one added later gets it from the collective add_process_set."""


class ProcessSet:
    """Ranks (global rank numbers) of one process set."""

    def __init__(self, ranks_or_comm):
        if hasattr(ranks_or_comm, "Get_group"):  # an mpi4py communicator
            raise ValueError("kolo: process sets from MPI communicators are not supported; "
                             "pass the list of ranks")
        ranks = sorted(int(r) for r in ranks_or_comm)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"kolo: process set ranks repeat: {list(ranks_or_comm)}")
        self.ranks = ranks
        self.process_set_id = None
        self._runtime = None

    def _attach(self, runtime, process_set_id):
        self._runtime = runtime
        self.process_set_id = process_set_id

    def _require(self):
        if self.process_set_id is None or self._runtime is None:
            raise ValueError("kolo: this process set is not registered; pass it to init() "
                             "or add_process_set()")
        return self._runtime

    def size(self):
        self._require()
        return len(self.ranks)

    def rank(self):
        """This process's rank within the set, or -1 when it is not a member."""
        runtime = self._require()
        me = runtime.engine().rank
        return self.ranks.index(me) if me in self.ranks else -1

    def included(self):
        runtime = self._require()
        return runtime.engine().rank in self.ranks

    def __eq__(self, other):
        return (isinstance(other, ProcessSet) and self.ranks == other.ranks
                and self.process_set_id == other.process_set_id)

    def __hash__(self):
        return hash((tuple(self.ranks), self.process_set_id))

    def __repr__(self):
        return f"ProcessSet(process_set_id={self.process_set_id}, ranks={self.ranks})"


class GlobalProcessSet(ProcessSet):
    """Every rank; id 0. Its rank list follows the current world size."""

    def __init__(self):
        super().__init__([])
        self.process_set_id = 0

    @property
    def ranks(self):
        if self._runtime is None or not self._runtime.is_initialized():
            return []
        return list(range(self._runtime.engine().size))

    @ranks.setter
    def ranks(self, value):  # set by ProcessSet.__init__; the list is derived
        pass

    def __repr__(self):
        return "ProcessSet(process_set_id=0, global)"


def process_set_id(process_set):
    """The id an operation's `process_set` argument names (a ProcessSet or an int)."""
    if process_set is None:
        return 0
    if isinstance(process_set, ProcessSet):
        if process_set.process_set_id is None:
            raise ValueError("kolo: this process set is not registered; pass it to init() "
                             "or add_process_set()")
        return process_set.process_set_id
    return int(process_set)
