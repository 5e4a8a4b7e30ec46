"""Plans: the task files `git failres run` takes (`plan_file`), and checking one without running it (`dry_run`)."""
