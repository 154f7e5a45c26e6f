from gradguard.cli.main import main

raise SystemExit(main())
