from kruise.manager.main import main

main()
