;; Decommission server s1; two services, three servers.
(define (problem loadbalancing-p05)
  (:domain loadbalancing)
  (:objects
    eu - region
    web db - service
    s1 s2 s3 - server
    b1 b2 b3 b4 - bucket)
  (:init
    (in-region s1 eu) (supports s1 web) (supports s1 db)
    (in-region s2 eu) (supports s2 web) (supports s2 db)
    (in-region s3 eu) (supports s3 db)
    (allowed b1 eu) (needs b1 web)
    (allowed b2 eu) (needs b2 db)
    (allowed b3 eu) (needs b3 web)
    (allowed b4 eu) (needs b4 web)
    (powered s1) (running web s1) (running db s1)
    (powered s2) (running web s2)
    (assigned b1 s1) (served b1)
    (assigned b2 s1) (served b2)
    (assigned b3 s1) (served b3)
    (assigned b4 s2) (served b4)
    (= (capacity s1) 3) (= (load s1) 3) (= (services s1) 2)
    (= (capacity s2) 3) (= (load s2) 1) (= (services s2) 1)
    (= (capacity s3) 2) (= (load s3) 0) (= (services s3) 0)
    (= (users web s1) 2) (= (users db s1) 1)
    (= (users web s2) 1) (= (users db s2) 0)
    (= (users web s3) 0) (= (users db s3) 0)
    (= (total-cost) 0))
  (:goal (and
    (served b1)
    (served b2)
    (served b3)
    (served b4)
    (not (powered s1))))
  (:metric minimize (total-cost)))
