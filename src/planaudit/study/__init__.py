"""Studies with people on the same tasks as the models: the study config, the tasks people
see (prepared and proven as the suite prepares them for models), the web server and its
database (`planaudit study serve`), and the researchers' view."""
