"""The class server's parts, each one concern: `roster` (who may submit, by hashed token), `queue` (the
submissions waiting in the database, fairness and limits), `engine` (where grading jobs run: local
processes, one per GPU, or Ray tasks), `dispatch` (the loop that hands queued jobs to the engine and
keeps their reports), `app` (the HTTP service and its pages) and `client` (`grader submit --server`)."""
